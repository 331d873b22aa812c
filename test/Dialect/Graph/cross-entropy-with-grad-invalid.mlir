// Verifier errors of cross_entropy_with_grad, one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

func.func @dlogits_shape(%z: tensor<4x10xf32>, %y: tensor<4xi64>, %g: tensor<f32>) {
  // expected-error @+1 {{dlogits (the logits' shape) must be [4, 10], got [4, 9]}}
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<4x10xf32>, tensor<4xi64>, tensor<f32> -> tensor<f32>, tensor<4x9xf32>
  return
}

// -----

func.func @labels_shape(%z: tensor<4x10xf32>, %y: tensor<5xi64>, %g: tensor<f32>) {
  // expected-error @+1 {{labels (logits without the class axis) must be [4], got [5]}}
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<4x10xf32>, tensor<5xi64>, tensor<f32> -> tensor<f32>, tensor<4x10xf32>
  return
}

// -----

func.func @g_not_scalar(%z: tensor<4x10xf32>, %y: tensor<4xi64>, %g: tensor<1xf32>) {
  // expected-error @+1 {{g (the scalar loss cotangent) must be [], got [1]}}
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<4x10xf32>, tensor<4xi64>, tensor<1xf32> -> tensor<f32>, tensor<4x10xf32>
  return
}

// -----

func.func @loss_not_scalar(%z: tensor<4x10xf32>, %y: tensor<4xi64>, %g: tensor<f32>) {
  // expected-error @+1 {{the loss (a scalar) must be [], got [4]}}
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<4x10xf32>, tensor<4xi64>, tensor<f32> -> tensor<4xf32>, tensor<4x10xf32>
  return
}

// -----

func.func @smoothing(%z: tensor<4x10xf32>, %y: tensor<4xi64>, %g: tensor<f32>) {
  // expected-error @+1 {{label_smoothing must be in [0, 1], got 1.5}}
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g {label_smoothing = 1.5} : tensor<4x10xf32>, tensor<4xi64>, tensor<f32> -> tensor<f32>, tensor<4x10xf32>
  return
}

// -----

func.func @float_labels(%z: tensor<4x10xf32>, %y: tensor<4x10xf32>, %g: tensor<f32>) {
  // expected-error @+1 {{operand #1 must be}}
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<4x10xf32>, tensor<4x10xf32>, tensor<f32> -> tensor<f32>, tensor<4x10xf32>
  return
}

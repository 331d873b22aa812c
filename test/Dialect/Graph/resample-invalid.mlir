// Verifier errors of the resampling ops, one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

func.func @adaptive_rank(%x: tensor<4x5x7xf32>) {
  // expected-error @+2 {{adaptive_avg_pool2d needs an input [N, C, H, W], got [4, 5, 7]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<4x5x7xf32> -> tensor<4x1x1xf32>
  return
}

// -----

func.func @adaptive_size(%x: tensor<1x4x5x7xf32>) {
  // expected-error @+2 {{adaptive_avg_pool2d output_size must be two positive sizes [OH, OW], got [0, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.adaptive_avg_pool2d %x {output_size = array<i64: 0, 2>} : tensor<1x4x5x7xf32> -> tensor<1x4x0x2xf32>
  return
}

// -----

func.func @adaptive_type(%x: tensor<1x4x5x7xf32>) {
  // expected-error @+2 {{'graph.adaptive_avg_pool2d' op inferred type(s) 'tensor<1x4x2x2xf32>' are incompatible with return type(s) of operation 'tensor<1x4x3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.adaptive_avg_pool2d %x {output_size = array<i64: 2, 2>} : tensor<1x4x5x7xf32> -> tensor<1x4x3x3xf32>
  return
}

// -----

func.func @upsample_both(%x: tensor<1x4x5x7xf32>) {
  // expected-error @+2 {{upsample_nearest2d needs either size = [OH, OW] or both scales_h and scales_w}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.upsample_nearest2d %x {size = array<i64: 10, 14>, scales_h = 2.0, scales_w = 2.0} : tensor<1x4x5x7xf32> -> tensor<1x4x10x14xf32>
  return
}

// -----

func.func @upsample_one_scale(%x: tensor<1x4x5x7xf32>) {
  // expected-error @+2 {{upsample_nearest2d needs either size = [OH, OW] or both scales_h and scales_w}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.upsample_nearest2d %x {scales_h = 2.0} : tensor<1x4x5x7xf32> -> tensor<1x4x10x7xf32>
  return
}

// -----

func.func @upsample_scale(%x: tensor<1x4x5x7xf32>) {
  // expected-error @+2 {{upsample_nearest2d scales must be > 0 and give a non-empty result}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.upsample_nearest2d %x {scales_h = 0.1, scales_w = 2.0} : tensor<1x4x5x7xf32> -> tensor<1x4x0x14xf32>
  return
}

// -----

func.func @adaptive_backward_g(%g: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{'graph.adaptive_avg_pool2d_backward' op g must have the forward result's shape [1, 4, 2, 2], got [1, 3, 2, 2]}}
  %0 = graph.adaptive_avg_pool2d_backward %g : tensor<1x3x2x2xf32> -> tensor<1x4x5x7xf32>
  return
}

// -----

func.func @upsample_backward_g(%g: tensor<1x4x10x10xf32>) {
  // expected-error @+1 {{'graph.upsample_nearest2d_backward' op g must have the forward result's shape [1, 4, 10, 14], got [1, 4, 10, 10]}}
  %0 = graph.upsample_nearest2d_backward %g {scales_h = 2.0, scales_w = 2.0} : tensor<1x4x10x10xf32> -> tensor<1x4x5x7xf32>
  return
}

// -----

func.func @upsample_backward_type(%g: tensor<1x4x10x14xf16>) {
  // expected-error @+1 {{'graph.upsample_nearest2d_backward' op g and dx must have one element type}}
  %0 = graph.upsample_nearest2d_backward %g {size = array<i64: 10, 14>} : tensor<1x4x10x14xf16> -> tensor<1x4x5x7xf32>
  return
}

// -----

func.func @bilinear_both(%x: tensor<1x4x5x7xf32>) {
  // expected-error @+2 {{upsample_bilinear2d needs either size = [OH, OW] or both scales_h and scales_w}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.upsample_bilinear2d %x {size = array<i64: 10, 14>, scales_h = 2.0, scales_w = 2.0} : tensor<1x4x5x7xf32> -> tensor<1x4x10x14xf32>
  return
}

// -----

func.func @bilinear_rank(%x: tensor<4x5x7xf32>) {
  // expected-error @+2 {{upsample_bilinear2d needs an input [N, C, H, W], got [4, 5, 7]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.upsample_bilinear2d %x {scales_h = 2.0, scales_w = 2.0} : tensor<4x5x7xf32> -> tensor<4x10x14xf32>
  return
}

// -----

func.func @bilinear_backward_g(%g: tensor<1x4x10x10xf32>) {
  // expected-error @+1 {{'graph.upsample_bilinear2d_backward' op g must have the forward result's shape [1, 4, 10, 14], got [1, 4, 10, 10]}}
  %0 = graph.upsample_bilinear2d_backward %g {scales_h = 2.0, scales_w = 2.0, align_corners = true} : tensor<1x4x10x10xf32> -> tensor<1x4x5x7xf32>
  return
}

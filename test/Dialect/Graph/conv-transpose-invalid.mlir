// Verifier errors of graph.conv_transpose2d, one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

func.func @rank(%x: tensor<4x3x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{conv_transpose2d needs input [N, Cin, H, W] and weight [Cin, Cout/groups, KH, KW], got [4, 3, 3] and [4, 3, 3, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv_transpose2d %x, %w : tensor<4x3x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x5x5xf32>
  return
}

// -----

func.func @weight_channels(%x: tensor<1x4x3x3xf32>, %w: tensor<3x4x3x3xf32>) {
  // expected-error @+2 {{conv_transpose2d weight [3, 4, 3, 3] must have the input's 4 channels first (weight is [Cin, Cout/groups, KH, KW])}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv_transpose2d %x, %w : tensor<1x4x3x3xf32>, tensor<3x4x3x3xf32> -> tensor<1x4x5x5xf32>
  return
}

// -----

func.func @groups(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{conv_transpose2d groups 3 must divide the 4 input channels}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv_transpose2d %x, %w {groups = 3} : tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32> -> tensor<1x6x5x5xf32>
  return
}

// -----

func.func @bias(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{conv_transpose2d bias must be [2] of the input's element type, got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv_transpose2d %x, %w, %b : tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>, tensor<4xf32> -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @output_padding(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{conv_transpose2d output_padding [2, 0] must be smaller than stride [2, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv_transpose2d %x, %w {stride = array<i64: 2, 2>, output_padding = array<i64: 2, 0>} : tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32> -> tensor<1x2x9x7xf32>
  return
}

// -----

func.func @stride(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{conv_transpose2d stride values must be >= 1, got [0, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv_transpose2d %x, %w {stride = array<i64: 0, 1>} : tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32> -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @padding(%x: tensor<1x4x1x1xf32>, %w: tensor<4x2x1x1xf32>) {
  // expected-error @+2 {{conv_transpose2d padding [1, 1] leaves no output for input [1, 1] and kernel [1, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv_transpose2d %x, %w {padding = array<i64: 1, 1>} : tensor<1x4x1x1xf32>, tensor<4x2x1x1xf32> -> tensor<1x2x1x1xf32>
  return
}

// -----

func.func @result_type(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x2x5x5xf32>' are incompatible with return type(s) of operation 'tensor<1x2x6x6xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv_transpose2d %x, %w : tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32> -> tensor<1x2x6x6xf32>
  return
}

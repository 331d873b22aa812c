// Verifier errors of graph.linear_gelu and graph.matmul_gelu_backward: one
// element type, the linear's / GEMM's shapes, the preactivation's shape.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

func.func @mixed_types(%x: tensor<8x32xbf16>, %w: tensor<16x32xbf16>) {
  // expected-error @+1 {{operands and results must share one element type}}
  %h, %z = graph.linear_gelu %x, %w : tensor<8x32xbf16>, tensor<16x32xbf16> -> tensor<8x16xbf16>, tensor<8x16xf32>
  return
}

// -----

func.func @k_mismatch(%x: tensor<8x32xf32>, %w: tensor<16x30xf32>) {
  // expected-error @+1 {{input [..., K] and weight [N, K] expected, got [8, 32] and [16, 30]}}
  %h, %z = graph.linear_gelu %x, %w : tensor<8x32xf32>, tensor<16x30xf32> -> tensor<8x16xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @bias_shape(%x: tensor<8x32xf32>, %w: tensor<16x32xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{bias must be [16], got [8]}}
  %h, %z = graph.linear_gelu %x, %w, %b : tensor<8x32xf32>, tensor<16x32xf32>, tensor<8xf32> -> tensor<8x16xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @preactivation_shape(%x: tensor<2x4x32xf32>, %w: tensor<16x32xf32>) {
  // expected-error @+1 {{result and preactivation must be [2, 4, 16], got [2, 4, 16] and [8, 16]}}
  %h, %z = graph.linear_gelu %x, %w : tensor<2x4x32xf32>, tensor<16x32xf32> -> tensor<2x4x16xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @rank3(%g: tensor<2x64x16xf32>, %w: tensor<16x32xf32>, %z: tensor<64x32xf32>) {
  // expected-error @+1 {{operands must be 2-D, got [2, 64, 16] and [16, 32]}}
  %d = graph.matmul_gelu_backward %g, %w, %z : tensor<2x64x16xf32>, tensor<16x32xf32>, tensor<64x32xf32> -> tensor<64x32xf32>
  return
}

// -----

func.func @backward_types(%g: tensor<64x16xbf16>, %w: tensor<16x32xbf16>, %z: tensor<64x32xf32>) {
  // expected-error @+1 {{operands and results must share one element type}}
  %d = graph.matmul_gelu_backward %g, %w, %z : tensor<64x16xbf16>, tensor<16x32xbf16>, tensor<64x32xf32> -> tensor<64x32xbf16>
  return
}

// -----

func.func @backward_k(%g: tensor<64x16xf32>, %w: tensor<16x32xf32>, %z: tensor<64x32xf32>) {
  // Transposed, the rhs [16, 32] is [N, K]: K 32 against the lhs's 16.
  // expected-error @+1 {{reduction dimensions differ: lhs K = 16, rhs K = 32}}
  %d = graph.matmul_gelu_backward %g, %w, %z {rhs_transposed} : tensor<64x16xf32>, tensor<16x32xf32>, tensor<64x32xf32> -> tensor<64x16xf32>
  return
}

// -----

func.func @backward_preactivation(%g: tensor<64x16xf32>, %w: tensor<16x32xf32>, %z: tensor<32x64xf32>) {
  // expected-error @+1 {{result and preactivation must be [64, 32], got [64, 32] and [32, 64]}}
  %d = graph.matmul_gelu_backward %g, %w, %z : tensor<64x16xf32>, tensor<16x32xf32>, tensor<32x64xf32> -> tensor<64x32xf32>
  return
}

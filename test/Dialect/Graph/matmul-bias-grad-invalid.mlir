// Verifier errors of graph.matmul_bias_grad: 2-D operands, one element type,
// K agreeing, the GEMM's result shape and the bias gradient [M].
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

func.func @rank3(%g: tensor<2x64x16xf32>, %x: tensor<64x32xf32>) {
  // expected-error @+1 {{operands must be 2-D, got [2, 64, 16] and [64, 32]}}
  %dw, %db = graph.matmul_bias_grad %g, %x {lhs_transposed} : tensor<2x64x16xf32>, tensor<64x32xf32> -> tensor<16x32xf32>, tensor<16xf32>
  return
}

// -----

func.func @mixed_types(%g: tensor<64x16xbf16>, %x: tensor<64x32xbf16>) {
  // expected-error @+1 {{operands and results must share one element type}}
  %dw, %db = graph.matmul_bias_grad %g, %x {lhs_transposed} : tensor<64x16xbf16>, tensor<64x32xbf16> -> tensor<16x32xbf16>, tensor<16xf32>
  return
}

// -----

func.func @k_mismatch(%g: tensor<64x16xf32>, %x: tensor<64x32xf32>) {
  // Without lhs_transposed the lhs is [M, K] = [64, 16]: K 16 against 64.
  // expected-error @+1 {{reduction dimensions differ: lhs K = 16, rhs K = 64}}
  %dw, %db = graph.matmul_bias_grad %g, %x : tensor<64x16xf32>, tensor<64x32xf32> -> tensor<16x32xf32>, tensor<16xf32>
  return
}

// -----

func.func @wrong_result(%g: tensor<64x16xf32>, %x: tensor<64x32xf32>) {
  // expected-error @+1 {{result must be [16, 32], got [32, 16]}}
  %dw, %db = graph.matmul_bias_grad %g, %x {lhs_transposed} : tensor<64x16xf32>, tensor<64x32xf32> -> tensor<32x16xf32>, tensor<16xf32>
  return
}

// -----

func.func @wrong_bias_grad(%g: tensor<64x16xf32>, %x: tensor<64x32xf32>) {
  // The sum runs over K (64 rows), leaving M = 16, not the rhs's N.
  // expected-error @+1 {{bias_grad (the lhs summed over K) must be [16], got [32]}}
  %dw, %db = graph.matmul_bias_grad %g, %x {lhs_transposed} : tensor<64x16xf32>, tensor<64x32xf32> -> tensor<16x32xf32>, tensor<32xf32>
  return
}

// graph-fuse-bias-grad: a weight-gradient GEMM (dY read transposed) and the
// reduce_sum of the same dY over its leading axes become one
// graph.matmul_bias_grad; every other shape stays as it was.
// RUN: ampc-opt %s --split-input-file --graph-fuse-bias-grad | FileCheck %s

// A linear's backward: dY [8, 16, 32] reshaped to rows for both GEMMs; the
// dX GEMM stays, dW and db fuse (the AMP notes of the GEMM kept).
// CHECK-LABEL: func.func @linear_backward
// CHECK:       %[[G2:.*]] = graph.reshape %arg0 : tensor<8x16x32xbf16> -> tensor<128x32xbf16>
// CHECK:       %[[X2:.*]] = graph.reshape %arg1 : tensor<8x16x64xbf16> -> tensor<128x64xbf16>
// CHECK:       %[[DX:.*]] = graph.matmul %[[G2]], %arg2 : tensor<128x32xbf16>, tensor<32x64xbf16> -> tensor<128x64xbf16>
// CHECK:       %[[DW:.*]], %[[DB:.*]] = graph.matmul_bias_grad %[[G2]], %[[X2]] {amp.precision = "bf16", lhs_transposed} : tensor<128x32xbf16>, tensor<128x64xbf16> -> tensor<32x64xbf16>, tensor<32xbf16>
// CHECK-NOT:   graph.reduce_sum
// CHECK:       return %[[DX]], %[[DW]], %[[DB]]
func.func @linear_backward(%g: tensor<8x16x32xbf16>, %x: tensor<8x16x64xbf16>,
                           %w: tensor<32x64xbf16>)
    -> (tensor<128x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16>) {
  %g2 = graph.reshape %g : tensor<8x16x32xbf16> -> tensor<128x32xbf16>
  %x2 = graph.reshape %x : tensor<8x16x64xbf16> -> tensor<128x64xbf16>
  %dx = graph.matmul %g2, %w : tensor<128x32xbf16>, tensor<32x64xbf16> -> tensor<128x64xbf16>
  %dw = graph.matmul %g2, %x2 {lhs_transposed, amp.precision = "bf16"} : tensor<128x32xbf16>, tensor<128x64xbf16> -> tensor<32x64xbf16>
  %db = graph.reduce_sum %g {axes = array<i64: 0, 1>} : tensor<8x16x32xbf16> -> tensor<32xbf16>
  return %dx, %dw, %db : tensor<128x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16>
}

// -----

// 2-D dY read directly, FP32, the sum first and negative axes: the fused op
// is built where the sum stood (its operands are defined before it).
// CHECK-LABEL: func.func @f32_sum_first
// CHECK-NEXT:  %[[DW:.*]], %[[DB:.*]] = graph.matmul_bias_grad %arg0, %arg1 {lhs_transposed} : tensor<64x16xf32>, tensor<64x8xf32> -> tensor<16x8xf32>, tensor<16xf32>
// CHECK-NEXT:  %[[E:.*]] = graph.exp %[[DB]]
// CHECK-NEXT:  return %[[DW]], %[[E]]
func.func @f32_sum_first(%g: tensor<64x16xf32>, %x: tensor<64x8xf32>)
    -> (tensor<16x8xf32>, tensor<16xf32>) {
  %db = graph.reduce_sum %g {axes = array<i64: -2>} : tensor<64x16xf32> -> tensor<16xf32>
  %e = graph.exp %db : tensor<16xf32>
  %dw = graph.matmul %g, %x {lhs_transposed} : tensor<64x16xf32>, tensor<64x8xf32> -> tensor<16x8xf32>
  return %dw, %e : tensor<16x8xf32>, tensor<16xf32>
}

// -----

// f16, the rhs read transposed too (the flag is kept).
// CHECK-LABEL: func.func @f16_rhs_transposed
// CHECK:       graph.matmul_bias_grad %arg0, %arg1 {lhs_transposed, rhs_transposed} : tensor<64x16xf16>, tensor<8x64xf16> -> tensor<16x8xf16>, tensor<16xf16>
// CHECK-NOT:   graph.reduce_sum
func.func @f16_rhs_transposed(%g: tensor<64x16xf16>, %x: tensor<8x64xf16>)
    -> (tensor<16x8xf16>, tensor<16xf16>) {
  %dw = graph.matmul %g, %x {lhs_transposed, rhs_transposed} : tensor<64x16xf16>, tensor<8x64xf16> -> tensor<16x8xf16>
  %db = graph.reduce_sum %g {axes = array<i64: 0>} : tensor<64x16xf16> -> tensor<16xf16>
  return %dw, %db : tensor<16x8xf16>, tensor<16xf16>
}

// -----

// The sum over the last axis is not the GEMM's K: nothing fuses.
// CHECK-LABEL: func.func @other_axes
// CHECK-NOT:   graph.matmul_bias_grad
// CHECK:       graph.matmul %arg0, %arg1 {lhs_transposed}
// CHECK:       graph.reduce_sum %arg0 {axes = array<i64: 1>}
func.func @other_axes(%g: tensor<64x16xf32>, %x: tensor<64x8xf32>)
    -> (tensor<16x8xf32>, tensor<64xf32>) {
  %dw = graph.matmul %g, %x {lhs_transposed} : tensor<64x16xf32>, tensor<64x8xf32> -> tensor<16x8xf32>
  %s = graph.reduce_sum %g {axes = array<i64: 1>} : tensor<64x16xf32> -> tensor<64xf32>
  return %dw, %s : tensor<16x8xf32>, tensor<64xf32>
}

// -----

// Only the leading axes of a rank-3 dY, not all of them; and keepdim.
// CHECK-LABEL: func.func @partial_and_keepdim
// CHECK-NOT:   graph.matmul_bias_grad
// CHECK:       graph.reduce_sum %arg0 {axes = array<i64: 0>}
// CHECK:       graph.reduce_sum %arg0 {axes = array<i64: 0, 1>, keepdim = true}
func.func @partial_and_keepdim(%g: tensor<4x16x32xf32>, %x: tensor<64x8xf32>)
    -> (tensor<32x8xf32>, tensor<16x32xf32>, tensor<1x1x32xf32>) {
  %g2 = graph.reshape %g : tensor<4x16x32xf32> -> tensor<64x32xf32>
  %dw = graph.matmul %g2, %x {lhs_transposed} : tensor<64x32xf32>, tensor<64x8xf32> -> tensor<32x8xf32>
  %s = graph.reduce_sum %g {axes = array<i64: 0>} : tensor<4x16x32xf32> -> tensor<16x32xf32>
  %k = graph.reduce_sum %g {axes = array<i64: 0, 1>, keepdim = true} : tensor<4x16x32xf32> -> tensor<1x1x32xf32>
  return %dw, %s, %k : tensor<32x8xf32>, tensor<16x32xf32>, tensor<1x1x32xf32>
}

// -----

// The sum reads another value than the GEMM's lhs; the GEMM reads dY
// untransposed (K is its last axis); a reshape that does not keep dY's last
// axis (K would be 256 rows of 16, not 128 rows of 32).
// CHECK-LABEL: func.func @not_the_operand
// CHECK-NOT:   graph.matmul_bias_grad
// CHECK-COUNT-3: graph.reduce_sum
func.func @not_the_operand(%g: tensor<64x16xf32>, %h: tensor<64x16xf32>,
                           %x: tensor<64x8xf32>, %y: tensor<16x8xf32>,
                           %g3: tensor<8x16x32xf32>, %z: tensor<256x4xf32>)
    -> (tensor<16x8xf32>, tensor<16xf32>, tensor<64x8xf32>, tensor<16xf32>,
        tensor<16x4xf32>, tensor<32xf32>) {
  %dw = graph.matmul %g, %x {lhs_transposed} : tensor<64x16xf32>, tensor<64x8xf32> -> tensor<16x8xf32>
  %s = graph.reduce_sum %h {axes = array<i64: 0>} : tensor<64x16xf32> -> tensor<16xf32>
  %c = graph.matmul %h, %y : tensor<64x16xf32>, tensor<16x8xf32> -> tensor<64x8xf32>
  %t = graph.reduce_sum %h {axes = array<i64: 0>} : tensor<64x16xf32> -> tensor<16xf32>
  %r = graph.reshape %g3 : tensor<8x16x32xf32> -> tensor<256x16xf32>
  %d = graph.matmul %r, %z {lhs_transposed} : tensor<256x16xf32>, tensor<256x4xf32> -> tensor<16x4xf32>
  %u = graph.reduce_sum %g3 {axes = array<i64: 0, 1>} : tensor<8x16x32xf32> -> tensor<32xf32>
  return %dw, %s, %c, %t, %d, %u : tensor<16x8xf32>, tensor<16xf32>, tensor<64x8xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<32xf32>
}


// graph-fuse-gemm-gelu: a linear and the tanh GELU of its result become one
// graph.linear_gelu (the GELU's backward reads its preactivation); a 2-D
// matmul used only as a tanh gelu_backward's gradient becomes one
// graph.matmul_gelu_backward. The erf GELU, a GEMM with another user and a
// batched GEMM stay as they were.
// RUN: ampc-opt %s --split-input-file --graph-fuse-gemm-gelu | FileCheck %s
// (test/Tools/cost-gemm-gelu.test: the training pipeline runs it only when
// asked.)

// A transformer MLP's forward and backward, 3-D activations: the forward
// keeps the linear's AMP notes; the backward's GEMM is fused where the
// gelu_backward stood, the preactivation viewed as [M, N], and the reshape
// of dz to rows reads the fused result directly.
// CHECK-LABEL: func.func @mlp
// CHECK-NEXT:  %[[H:.*]], %[[Z:.*]] = graph.linear_gelu %arg0, %arg1, %arg2 {amp.precision = "bf16"} : tensor<2x8x16xbf16>, tensor<64x16xbf16>, tensor<64xbf16> -> tensor<2x8x64xbf16>, tensor<2x8x64xbf16>
// CHECK-NEXT:  %[[Z2:.*]] = graph.reshape %[[Z]] : tensor<2x8x64xbf16> -> tensor<16x64xbf16>
// CHECK-NEXT:  %[[DZ:.*]] = graph.matmul_gelu_backward %arg3, %arg4, %[[Z2]] : tensor<16x16xbf16>, tensor<16x64xbf16>, tensor<16x64xbf16> -> tensor<16x64xbf16>
// CHECK-NEXT:  %[[X2:.*]] = graph.reshape %arg0
// CHECK-NEXT:  %[[DW:.*]] = graph.matmul %[[DZ]], %[[X2]] {lhs_transposed}
// CHECK-NEXT:  return %[[H]], %[[DW]]
func.func @mlp(%x: tensor<2x8x16xbf16>, %w: tensor<64x16xbf16>,
               %b: tensor<64xbf16>, %dy: tensor<16x16xbf16>,
               %w2: tensor<16x64xbf16>)
    -> (tensor<2x8x64xbf16>, tensor<64x16xbf16>) {
  %z = graph.linear %x, %w, %b {amp.precision = "bf16"} : tensor<2x8x16xbf16>, tensor<64x16xbf16>, tensor<64xbf16> -> tensor<2x8x64xbf16>
  %h = graph.gelu %z {approximate = "tanh"} : tensor<2x8x64xbf16>
  %g = graph.matmul %dy, %w2 : tensor<16x16xbf16>, tensor<16x64xbf16> -> tensor<16x64xbf16>
  %g3 = graph.reshape %g : tensor<16x64xbf16> -> tensor<2x8x64xbf16>
  %dz = graph.gelu_backward %z, %g3 {approximate = "tanh"} : tensor<2x8x64xbf16>, tensor<2x8x64xbf16> -> tensor<2x8x64xbf16>
  %dz2 = graph.reshape %dz : tensor<2x8x64xbf16> -> tensor<16x64xbf16>
  %x2 = graph.reshape %x : tensor<2x8x16xbf16> -> tensor<16x16xbf16>
  %dw = graph.matmul %dz2, %x2 {lhs_transposed} : tensor<16x64xbf16>, tensor<16x16xbf16> -> tensor<64x16xbf16>
  return %h, %dw : tensor<2x8x64xbf16>, tensor<64x16xbf16>
}

// -----

// 2-D, FP32, no bias, transposed GEMM operands (the flags are kept); dz is
// returned as it is.
// CHECK-LABEL: func.func @f32_flags
// CHECK-NEXT:  %[[H:.*]], %[[Z:.*]] = graph.linear_gelu %arg0, %arg1 : tensor<8x16xf32>, tensor<32x16xf32> -> tensor<8x32xf32>, tensor<8x32xf32>
// CHECK-NEXT:  %[[DZ:.*]] = graph.matmul_gelu_backward %arg2, %arg3, %[[Z]] {lhs_transposed, rhs_transposed} : tensor<4x8xf32>, tensor<32x4xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
// CHECK-NEXT:  return %[[H]], %[[DZ]]
func.func @f32_flags(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>,
                     %a: tensor<4x8xf32>, %c: tensor<32x4xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %z = graph.linear %x, %w : tensor<8x16xf32>, tensor<32x16xf32> -> tensor<8x32xf32>
  %h = graph.gelu %z {approximate = "tanh"} : tensor<8x32xf32>
  %g = graph.matmul %a, %c {lhs_transposed, rhs_transposed} : tensor<4x8xf32>, tensor<32x4xf32> -> tensor<8x32xf32>
  %dz = graph.gelu_backward %z, %g {approximate = "tanh"} : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  return %h, %dz : tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// The erf GELU: cuBLASLt's epilogue computes the tanh form only.
// CHECK-LABEL: func.func @erf
// CHECK-NEXT:  graph.linear %arg0
// CHECK-NEXT:  graph.gelu
// CHECK-NEXT:  graph.matmul
// CHECK-NEXT:  graph.gelu_backward
func.func @erf(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>,
               %a: tensor<8x4xf32>, %c: tensor<4x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %z = graph.linear %x, %w : tensor<8x16xf32>, tensor<32x16xf32> -> tensor<8x32xf32>
  %h = graph.gelu %z : tensor<8x32xf32>
  %g = graph.matmul %a, %c : tensor<8x4xf32>, tensor<4x32xf32> -> tensor<8x32xf32>
  %dz = graph.gelu_backward %z, %g : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  return %h, %dz : tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// The GEMM's result has another user, and a batched GEMM: both stay (the
// first would still need its rounded result).
// CHECK-LABEL: func.func @not_fused
// CHECK-NEXT:  graph.matmul
// CHECK-NEXT:  graph.gelu_backward
// CHECK-NEXT:  graph.batch_matmul
// CHECK-NEXT:  graph.gelu_backward
func.func @not_fused(%z: tensor<8x32xf32>, %a: tensor<8x4xf32>,
                     %c: tensor<4x32xf32>, %z3: tensor<2x8x32xf32>,
                     %a3: tensor<2x8x4xf32>, %c3: tensor<2x4x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<2x8x32xf32>) {
  %g = graph.matmul %a, %c : tensor<8x4xf32>, tensor<4x32xf32> -> tensor<8x32xf32>
  %dz = graph.gelu_backward %z, %g {approximate = "tanh"} : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %g3 = graph.batch_matmul %a3, %c3 : tensor<2x8x4xf32>, tensor<2x4x32xf32> -> tensor<2x8x32xf32>
  %dz3 = graph.gelu_backward %z3, %g3 {approximate = "tanh"} : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return %dz, %g, %dz3 : tensor<8x32xf32>, tensor<8x32xf32>, tensor<2x8x32xf32>
}

// graph.linear_gelu and graph.matmul_gelu_backward (a GEMM with the tanh
// GELU, or its derivative, in the epilogue): parsed, printed and parsed
// again, with and without a bias, with either transpose flag.
// RUN: ampc-opt %s | ampc-opt | FileCheck %s

// CHECK-LABEL: func.func @gemm_gelu
// CHECK: %[[H:.*]], %[[Z:.*]] = graph.linear_gelu %arg0, %arg1, %arg2 : tensor<4x16x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<4x16x256xbf16>, tensor<4x16x256xbf16>
// CHECK: graph.linear_gelu %arg3, %arg4 : tensor<8x32xf32>, tensor<16x32xf32> -> tensor<8x16xf32>, tensor<8x16xf32>
// CHECK: %[[D:.*]] = graph.matmul_gelu_backward %arg5, %arg6, %arg7 {rhs_transposed} : tensor<64x32xf16>, tensor<256x32xf16>, tensor<64x256xf16> -> tensor<64x256xf16>
// CHECK: return %[[H]], %[[Z]]
func.func @gemm_gelu(%x: tensor<4x16x64xbf16>, %w: tensor<256x64xbf16>,
                     %b: tensor<256xbf16>, %x2: tensor<8x32xf32>,
                     %w2: tensor<16x32xf32>, %g: tensor<64x32xf16>,
                     %v: tensor<256x32xf16>, %z: tensor<64x256xf16>)
    -> (tensor<4x16x256xbf16>, tensor<4x16x256xbf16>, tensor<8x16xf32>,
        tensor<64x256xf16>) {
  %h, %pre = graph.linear_gelu %x, %w, %b : tensor<4x16x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<4x16x256xbf16>, tensor<4x16x256xbf16>
  %h2, %pre2 = graph.linear_gelu %x2, %w2 : tensor<8x32xf32>, tensor<16x32xf32> -> tensor<8x16xf32>, tensor<8x16xf32>
  %d = graph.matmul_gelu_backward %g, %v, %z {rhs_transposed} : tensor<64x32xf16>, tensor<256x32xf16>, tensor<64x256xf16> -> tensor<64x256xf16>
  return %h, %pre, %h2, %d : tensor<4x16x256xbf16>, tensor<4x16x256xbf16>, tensor<8x16xf32>, tensor<64x256xf16>
}

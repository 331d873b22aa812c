// graph.matmul_bias_grad (a weight-gradient GEMM and the sum of its lhs over
// K): parsed, printed and parsed again, with either transpose flag.
// RUN: ampc-opt %s | ampc-opt | FileCheck %s

// CHECK-LABEL: func.func @bias_grad
// CHECK: %[[W:.*]], %[[B:.*]] = graph.matmul_bias_grad %{{.*}}, %{{.*}} {lhs_transposed} : tensor<64x16xbf16>, tensor<64x32xbf16> -> tensor<16x32xbf16>, tensor<16xbf16>
// CHECK: graph.matmul_bias_grad %{{.*}}, %{{.*}} {rhs_transposed} : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>, tensor<16xf32>
// CHECK: return %[[W]], %[[B]]
func.func @bias_grad(%g: tensor<64x16xbf16>, %x: tensor<64x32xbf16>,
                     %a: tensor<16x64xf32>, %b: tensor<32x64xf32>)
    -> (tensor<16x32xbf16>, tensor<16xbf16>, tensor<16x32xf32>, tensor<16xf32>) {
  %dw, %db = graph.matmul_bias_grad %g, %x {lhs_transposed} : tensor<64x16xbf16>, tensor<64x32xbf16> -> tensor<16x32xbf16>, tensor<16xbf16>
  %c, %s = graph.matmul_bias_grad %a, %b {rhs_transposed} : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>, tensor<16xf32>
  return %dw, %db, %c, %s : tensor<16x32xbf16>, tensor<16xbf16>, tensor<16x32xf32>, tensor<16xf32>
}

// cross_entropy_with_grad parses, verifies, prints and parses again
// (custom and generic forms).
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @fused
// CHECK: %{{.*}}, %{{.*}} = graph.cross_entropy_with_grad %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = 0 : i64, label_smoothing = 5.000000e-02 : f64} : tensor<2x3x10xbf16>, tensor<2x3xi64>, tensor<f32> -> tensor<f32>, tensor<2x3x10xbf16>
func.func @fused(%z: tensor<2x3x10xbf16>, %y: tensor<2x3xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<2x3x10xbf16>) {
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g {ignore_index = 0 : i64, label_smoothing = 0.05} : tensor<2x3x10xbf16>, tensor<2x3xi64>, tensor<f32> -> tensor<f32>, tensor<2x3x10xbf16>
  return %l, %dz : tensor<f32>, tensor<2x3x10xbf16>
}

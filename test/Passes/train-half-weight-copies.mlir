// train-half-weight-copies: under AMP, @m_grad reads a half copy of each
// master weight its GEMMs cast (an argument {graph.param_copy = name} of the
// AMP type, which the fused epilogue keeps current) instead of casting the
// FP32 master every step. A weight read in FP32 (the layer norm's) gets no
// copy; without AMP nothing changes.
// RUN: ampc-opt %s --graph-autocast=mode=bf16 --graph-autodiff --train-build-step=amp=bf16 --cse --train-half-weight-copies | FileCheck %s
// RUN: ampc-opt %s --graph-autocast=mode=fp16 --graph-autodiff --train-build-step=amp=fp16 --cse --train-half-weight-copies | FileCheck %s --check-prefix=F16
// RUN: ampc-opt %s --graph-autodiff --train-build-step --train-half-weight-copies | FileCheck %s --check-prefix=OFF
// The training pipeline runs it by default; half-weight-copies=0 keeps the casts:
// RUN: ampc-opt %s --ampc-train-pipeline="amp=bf16" | FileCheck %s --check-prefix=PIPE
// RUN: ampc-opt %s --ampc-train-pipeline="amp=bf16 half-weight-copies=0" | FileCheck %s --check-prefix=CASTS

// CHECK-LABEL: func.func @net_grad(
// CHECK-SAME:  %[[W:[a-z0-9]+]]: tensor<3x8xf32> {graph.param = "fc.weight"}
// CHECK-SAME:  %[[B:[a-z0-9]+]]: tensor<3xf32> {graph.param = "fc.bias"}
// CHECK-SAME:  %[[G:[a-z0-9]+]]: tensor<3xf32> {graph.param = "ln.weight"}
// CHECK-SAME:  %[[HW:[a-z0-9]+]]: tensor<3x8xbf16> {graph.param_copy = "fc.weight"}
// CHECK-SAME:  %[[HB:[a-z0-9]+]]: tensor<3xbf16> {graph.param_copy = "fc.bias"})
// CHECK-NOT:   graph.cast %[[W]]
// CHECK-NOT:   graph.cast %[[B]]
// CHECK:       graph.linear %{{.*}}, %[[HW]], %[[HB]]
// CHECK:       graph.layer_norm {{.*}}%[[G]]
// CHECK:       return

// F16-LABEL: func.func @net_grad(
// F16-SAME:  tensor<3x8xf16> {graph.param_copy = "fc.weight"}, %{{.*}}: tensor<3xf16> {graph.param_copy = "fc.bias"})

// OFF-LABEL: func.func @net_grad(
// OFF-NOT:   graph.param_copy
// OFF:       return

// PIPE-LABEL: func.func @net_grad(
// PIPE-SAME:  {graph.param_copy = "fc.weight"}
// PIPE-NOT:   graph.cast %arg2
// PIPE:       return

// CASTS-LABEL: func.func @net_grad(
// CASTS-NOT:   graph.param_copy
// CASTS:       kernel.fused_elementwise ins(%arg2 : tensor<3x8xf32>)
// CASTS-NEXT:  ^bb0(%[[A:.*]]: tensor<3x8xf32>):
// CASTS-NEXT:  graph.cast %[[A]] : tensor<3x8xf32> -> tensor<3x8xbf16>
graph.model @net {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4xi64>
  %w = graph.param "fc.weight" init(#graph.zeros) : tensor<3x8xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<3xf32>
  %g = graph.param "ln.weight" init(#graph.ones) : tensor<3xf32>
  %gb = graph.param "ln.bias" init(#graph.zeros) : tensor<3xf32>
  %y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %n = graph.layer_norm %y, %g, %gb : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %l = graph.cross_entropy %n, %t : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

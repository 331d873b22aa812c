// nll_loss, binary_cross_entropy_with_logits, cross_entropy with probability
// labels, argmax, gather, cumsum and their backward ops parse, verify, print
// and parse again (custom and generic forms).
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: graph.model @nll
graph.model @nll {
  %z = graph.input "z" : tensor<8x10xf32>
  %y = graph.input "y" : tensor<8xi64>
  %lp = graph.log_softmax %z {axis = -1} : tensor<8x10xf32>
  // CHECK: graph.nll_loss %{{.*}}, %{{.*}} : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  %0 = graph.nll_loss %lp, %y : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  // CHECK: graph.nll_loss %{{.*}}, %{{.*}} {ignore_index = 3 : i64, reduction = "none"} : tensor<8x10xf32>, tensor<8xi64> -> tensor<8xf32>
  %1 = graph.nll_loss %lp, %y {ignore_index = 3, reduction = "none"} : tensor<8x10xf32>, tensor<8xi64> -> tensor<8xf32>
  // CHECK: graph.nll_loss_backward %{{.*}}, %{{.*}} {reduction = "sum"} : tensor<8xi64>, tensor<f32> -> tensor<8x10xf32>
  %2 = graph.nll_loss_backward %y, %0 {reduction = "sum"} : tensor<8xi64>, tensor<f32> -> tensor<8x10xf32>
  %s = graph.reduce_sum %1 : tensor<8xf32> -> tensor<f32>
  %l = graph.add %0, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @bce
graph.model @bce {
  %x = graph.input "x" : tensor<8x4xf16>
  %t = graph.input "t" : tensor<8x4xf16>
  %w = graph.input "w" : tensor<4xf16>
  // CHECK: graph.binary_cross_entropy_with_logits %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x4xf16>, tensor<8x4xf16>, tensor<4xf16> -> tensor<f16>
  %0 = graph.binary_cross_entropy_with_logits %x, %t, %w : tensor<8x4xf16>, tensor<8x4xf16>, tensor<4xf16> -> tensor<f16>
  // CHECK: graph.binary_cross_entropy_with_logits %{{.*}}, %{{.*}} {reduction = "none"} : tensor<8x4xf16>, tensor<8x4xf16> -> tensor<8x4xf16>
  %1 = graph.binary_cross_entropy_with_logits %x, %t {reduction = "none"} : tensor<8x4xf16>, tensor<8x4xf16> -> tensor<8x4xf16>
  %s = graph.reduce_sum %1 : tensor<8x4xf16> -> tensor<f16>
  %l = graph.add %0, %s : tensor<f16>, tensor<f16> -> tensor<f16>
  graph.output loss = %l : tensor<f16>
}

// -----

// CHECK-LABEL: graph.model @soft_ce
graph.model @soft_ce {
  %z = graph.input "z" : tensor<8x10xf32>
  %p = graph.input "p" : tensor<8x10xf32>
  // CHECK: graph.cross_entropy %{{.*}}, %{{.*}} {label_smoothing = 1.000000e-01 : f64} : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<f32>
  %l = graph.cross_entropy %z, %p {label_smoothing = 0.1} : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @indexing
graph.model @indexing {
  %x = graph.input "x" : tensor<4x10xbf16>
  %i = graph.input "i" : tensor<4x3xi32>
  // CHECK: graph.argmax %{{.*}} {axis = -1 : i64} : tensor<4x10xbf16> -> tensor<4xi64>
  %a = graph.argmax %x {axis = -1} : tensor<4x10xbf16> -> tensor<4xi64>
  // CHECK: graph.argmax %{{.*}} {axis = 0 : i64, keepdim = true} : tensor<4x10xbf16> -> tensor<1x10xi64>
  %b = graph.argmax %x {axis = 0, keepdim = true} : tensor<4x10xbf16> -> tensor<1x10xi64>
  // CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<4x10xbf16>, tensor<4x3xi32> -> tensor<4x3xbf16>
  %g = graph.gather %x, %i {axis = 1} : tensor<4x10xbf16>, tensor<4x3xi32> -> tensor<4x3xbf16>
  // CHECK: graph.gather_backward %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<4x3xi32>, tensor<4x3xbf16> -> tensor<4x10xbf16>
  %dg = graph.gather_backward %i, %g {axis = 1} : tensor<4x3xi32>, tensor<4x3xbf16> -> tensor<4x10xbf16>
  // CHECK: graph.cumsum %{{.*}} {axis = 1 : i64} : tensor<4x10xbf16>
  %c = graph.cumsum %dg {axis = 1} : tensor<4x10xbf16>
  // CHECK: graph.cumsum %{{.*}} {axis = -2 : i64, reverse} : tensor<4x10xbf16>
  %r = graph.cumsum %c {axis = -2, reverse} : tensor<4x10xbf16>
  %l = graph.reduce_sum %r : tensor<4x10xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>, top = %a : tensor<4xi64>, top0 = %b : tensor<1x10xi64>
}

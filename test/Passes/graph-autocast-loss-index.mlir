// Autocast of nll_loss, binary_cross_entropy_with_logits and cumsum (PyTorch's
// fp32 lists: nll_loss and binary_cross_entropy_with_logits in AT_FORALL_FP32,
// cumsum in AT_FORALL_FP32_SET_OPT_DTYPE) and of argmax and gather (no
// autocast entry: they run in their input's type; integer operands are never
// cast).
// RUN: ampc-opt %s --split-input-file --graph-autocast | FileCheck %s

// CHECK-LABEL: graph.model @losses
// CHECK:      %[[H:.*]] = graph.matmul {{.*}} -> tensor<4x8xf16>
// CHECK-NEXT: %[[HF:.*]] = graph.cast %[[H]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK-NEXT: graph.nll_loss %[[HF]], %{{.*}} {amp.precision = "fp32", amp.rule = "fp32-list (loss)"} : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
// CHECK-NEXT: graph.binary_cross_entropy_with_logits %[[HF]], %{{.*}}, %{{.*}} {amp.precision = "fp32", amp.rule = "fp32-list (loss)"} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<f32>
// CHECK-NEXT: graph.cumsum %[[HF]] {amp.precision = "fp32", amp.rule = "fp32-list (reduction)", axis = 1 : i64} : tensor<4x8xf32>
graph.model @losses {
  %x = graph.input "x" : tensor<4x8xf32>
  %y = graph.input "y" : tensor<4xi64>
  %t = graph.input "t" : tensor<4x8xf32>
  %pw = graph.input "pw" : tensor<8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %h = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %a = graph.nll_loss %h, %y : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
  %b = graph.binary_cross_entropy_with_logits %h, %t, %pw : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<f32>
  %c = graph.cumsum %h {axis = 1} : tensor<4x8xf32>
  %s = graph.reduce_sum %c : tensor<4x8xf32> -> tensor<f32>
  %ab = graph.add %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %ab, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @indexing
// CHECK:      %[[H:.*]] = graph.matmul {{.*}} -> tensor<4x8xf16>
// CHECK-NEXT: %[[A:.*]] = graph.argmax %[[H]] {amp.precision = "fp16", amp.rule = "follows operand 0", axis = 1 : i64, keepdim = true} : tensor<4x8xf16> -> tensor<4x1xi64>
// CHECK-NEXT: graph.gather %[[H]], %[[A]] {amp.precision = "fp16", amp.rule = "follows operand 0", axis = 1 : i64} : tensor<4x8xf16>, tensor<4x1xi64> -> tensor<4x1xf16>
graph.model @indexing {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %h = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %a = graph.argmax %h {axis = 1, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xi64>
  %g = graph.gather %h, %a {axis = 1} : tensor<4x8xf32>, tensor<4x1xi64> -> tensor<4x1xf32>
  %l = graph.reduce_sum %g : tensor<4x1xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

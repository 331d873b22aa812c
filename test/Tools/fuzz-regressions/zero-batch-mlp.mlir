// RUN: not ampc check %s 2>&1 | FileCheck %s --implicit-check-not='Stack dump'
// RUN: not ampc explain %s --amp=fp16 2>&1 | FileCheck %s --implicit-check-not='Stack dump'
// Found by test/fuzz/fuzz_models.py (seeds 6 and 11: mlp.mlir with 128, the
// batch and fc2's width, replaced by 0 everywhere): SIGFPE in
// LinearOp::buildVJP (fc3's K = 0). Same root cause as
// zero-dim-linear-vjp.mlir; the first empty tensor is now the error.
graph.model @mlp {
  %image = graph.input "image" : tensor<0x784xf32>
  %label = graph.input "label" : tensor<0xi64>
  %w1 = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<256x784xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<256xf32>
  %w2 = graph.param "fc2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<0x256xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<0xf32>
  %w3 = graph.param "fc3.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<10x0xf32>
  %b3 = graph.param "fc3.bias" init(#graph.zeros) : tensor<10xf32>
  %h1 = graph.linear %image, %w1, %b1 : tensor<0x784xf32>, tensor<256x784xf32>, tensor<256xf32> -> tensor<0x256xf32>
  %a1 = graph.relu %h1 : tensor<0x256xf32>
  %h2 = graph.linear %a1, %w2, %b2 : tensor<0x256xf32>, tensor<0x256xf32>, tensor<0xf32> -> tensor<0x0xf32>
  %a2 = graph.relu %h2 : tensor<0x0xf32>
  %logits = graph.linear %a2, %w3, %b3 : tensor<0x0xf32>, tensor<10x0xf32>, tensor<10xf32> -> tensor<0x10xf32>
  %loss = graph.cross_entropy %logits, %label : tensor<0x10xf32>, tensor<0xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, logits = %logits : tensor<0x10xf32>
}
// CHECK: zero-batch-mlp.mlir:8:12: error: 'graph.input' op result type 'tensor<0x784xf32>' has a dimension of size 0; empty tensors are not supported

// A small classifier with dropout for the data-parallel tests. Batch 8 here;
// dp_test.py derives the per-rank batch-4 variant by rewriting every
// "tensor<8x" (the batch dim; no parameter starts with 8) to "tensor<4x".
graph.model @dp_mlp {
  %x = graph.input "x" : tensor<8x16xf32>
  %label = graph.input "label" : tensor<8xi64>
  %w1 = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<32x16xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<32xf32>
  %w2 = graph.param "fc2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<4x32xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<4xf32>
  %h = graph.linear %x, %w1, %b1 : tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %a = graph.relu %h : tensor<8x32xf32>
  %d = graph.dropout %a {p = 0.25, key = 1} : tensor<8x32xf32>
  %logits = graph.linear %d, %w2, %b2 : tensor<8x32xf32>, tensor<4x32xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %loss = graph.cross_entropy %logits, %label : tensor<8x4xf32>, tensor<8xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, logits = %logits : tensor<8x4xf32>
}

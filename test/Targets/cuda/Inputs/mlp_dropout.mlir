// A small MLP with dropout (GPU tests): the CUDA target draws the same
// masks as the CPU target (Philox keyed on seed, step, op key and shard),
// also when the step is a replayed CUDA graph.
graph.model @mlp_dropout {
  %image = graph.input "image" : tensor<64x32xf32>
  %label = graph.input "label" : tensor<64xi64>
  %w1 = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<64x32xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<64xf32>
  %w2 = graph.param "fc2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<10x64xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<10xf32>
  %h1 = graph.linear %image, %w1, %b1 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<64x64xf32>
  %a1 = graph.relu %h1 : tensor<64x64xf32>
  %d1 = graph.dropout %a1 {p = 0.25, key = 1} : tensor<64x64xf32>
  %logits = graph.linear %d1, %w2, %b2 : tensor<64x64xf32>, tensor<10x64xf32>, tensor<10xf32> -> tensor<64x10xf32>
  %loss = graph.cross_entropy %logits, %label : tensor<64x10xf32>, tensor<64xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, logits = %logits : tensor<64x10xf32>
}

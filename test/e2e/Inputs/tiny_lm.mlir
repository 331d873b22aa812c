// A 5-token, 2-position language model: token ids bounded by the embedding
// table's rows, targets by the cross_entropy's classes.
graph.model @tiny_lm {
  %tokens = graph.input "tokens" : tensor<4x2xi64>
  %targets = graph.input "targets" : tensor<4x2xi64>
  %wte = graph.param "wte" init(#graph.normal<std = 0.02>) : tensor<5x3xf32>
  %w = graph.param "head.weight" init(#graph.normal<std = 0.02>) : tensor<5x3xf32>
  %e = graph.embedding %tokens, %wte : tensor<4x2xi64>, tensor<5x3xf32> -> tensor<4x2x3xf32>
  %logits = graph.linear %e, %w : tensor<4x2x3xf32>, tensor<5x3xf32> -> tensor<4x2x5xf32>
  %loss = graph.cross_entropy %logits, %targets : tensor<4x2x5xf32>, tensor<4x2xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}

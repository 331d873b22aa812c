// A 3-feature, 2-class linear classifier with an integer label input: the
// smallest model that has float and integer inputs and logits.
graph.model @tiny_classifier {
  %x = graph.input "x" : tensor<4x3xf32>
  %label = graph.input "label" : tensor<4xi64>
  %w = graph.param "fc.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<2x3xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<2xf32>
  %logits = graph.linear %x, %w, %b : tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32> -> tensor<4x2xf32>
  %loss = graph.cross_entropy %logits, %label : tensor<4x2xf32>, tensor<4xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, logits = %logits : tensor<4x2xf32>
}

graph.model @a {
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}
graph.model @b {
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}

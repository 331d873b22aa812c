graph.model @s {
  %l = graph.input "l : tensor<f32>
  graph.output loss = %l : tensor<f32>
}

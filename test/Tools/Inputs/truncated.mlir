graph.model @cut {
  %x = graph.input "x" : tensor<4x
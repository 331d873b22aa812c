// A linear layer with 40000 outputs over 12 rows: its bias gradient is
// column sums of 12 rows of 40000, one chunk of more than 8 rows
// (test/Tools/cost-linear.test).
graph.model @wide {
  %x = graph.input "x" : tensor<12x8xf32>
  %t = graph.input "t" : tensor<12x40000xf32>
  %w = graph.param "fc.weight" init(#graph.zeros) : tensor<40000x8xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<40000xf32>
  %y = graph.linear %x, %w, %b : tensor<12x8xf32>, tensor<40000x8xf32>, tensor<40000xf32> -> tensor<12x40000xf32>
  %loss = graph.mse_loss %y, %t : tensor<12x40000xf32>, tensor<12x40000xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}

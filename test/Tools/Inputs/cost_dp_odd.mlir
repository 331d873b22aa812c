// One linear whose bias is declared before its weight, so that in the
// all-reduce's order (reverse parameter order) the weight (192 floats, a
// multiple of 64) comes first and the bias (3) last: the data-parallel
// cost test's in-place buckets (test/Tools/cost-data-parallel.test).
graph.model @odd {
  %x = graph.input "x" : tensor<4x64xf32>
  %t = graph.input "t" : tensor<4x3xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<3xf32>
  %w = graph.param "fc.weight" init(#graph.zeros) : tensor<3x64xf32>
  %y = graph.linear %x, %w, %b : tensor<4x64xf32>, tensor<3x64xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %loss = graph.mse_loss %y, %t : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}

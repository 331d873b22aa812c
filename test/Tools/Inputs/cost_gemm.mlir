// One large linear layer: compute-bound in bf16 on the tensor cores
// (test/Tools/cost-report.test).
graph.model @gemm {
  %x = graph.input "x" : tensor<256x1024xf32>
  %t = graph.input "t" : tensor<256x1024xf32>
  %w = graph.param "fc.weight" init(#graph.zeros) : tensor<1024x1024xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<1024xf32>
  %y = graph.linear %x, %w, %b : tensor<256x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<256x1024xf32>
  %loss = graph.mse_loss %y, %t : tensor<256x1024xf32>, tensor<256x1024xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}

// One linear of 1024 x 1024 (4 MiB of FP32 gradient and a 4 KiB bias): a
// bucket large enough that NCCL's model sends it by LL128 or Simple, not LL
// (test/Tools/cost-data-parallel.test).
graph.model @wide {
  %x = graph.input "x" : tensor<4x1024xf32>
  %t = graph.input "t" : tensor<4x1024xf32>
  %w = graph.param "fc.weight" init(#graph.zeros) : tensor<1024x1024xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<1024xf32>
  %y = graph.linear %x, %w, %b : tensor<4x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<4x1024xf32>
  %loss = graph.mse_loss %y, %t : tensor<4x1024xf32>, tensor<4x1024xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}

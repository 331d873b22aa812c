// B2: 3 x Linear(4096) + ReLU, batch 512 (bench/gpu.sh).
graph.model @mlp4096 {
  %x = graph.input "x" : tensor<512x4096xf32>
  %label = graph.input "label" : tensor<512xi64>
  %w1 = graph.param "fc1.weight" init(#graph.normal<mean = 0.0, std = 0.02>) : tensor<4096x4096xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<4096xf32>
  %w2 = graph.param "fc2.weight" init(#graph.normal<mean = 0.0, std = 0.02>) : tensor<4096x4096xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<4096xf32>
  %w3 = graph.param "fc3.weight" init(#graph.normal<mean = 0.0, std = 0.02>) : tensor<4096x4096xf32>
  %b3 = graph.param "fc3.bias" init(#graph.zeros) : tensor<4096xf32>
  %h1 = graph.linear %x, %w1, %b1 : tensor<512x4096xf32>, tensor<4096x4096xf32>, tensor<4096xf32> -> tensor<512x4096xf32>
  %a1 = graph.relu %h1 : tensor<512x4096xf32>
  %h2 = graph.linear %a1, %w2, %b2 : tensor<512x4096xf32>, tensor<4096x4096xf32>, tensor<4096xf32> -> tensor<512x4096xf32>
  %a2 = graph.relu %h2 : tensor<512x4096xf32>
  %h3 = graph.linear %a2, %w3, %b3 : tensor<512x4096xf32>, tensor<4096x4096xf32>, tensor<4096xf32> -> tensor<512x4096xf32>
  %a3 = graph.relu %h3 : tensor<512x4096xf32>
  %loss = graph.cross_entropy %a3, %label : tensor<512x4096xf32>, tensor<512xi64> -> tensor<f32>
  graph.output "loss" = %loss : tensor<f32>
}

// Fashion-MNIST classifier: 784-256-128-10 with ReLU, batch 128.
// Train it: see examples/README.md.
graph.model @mlp {
  %image = graph.input "image" : tensor<128x784xf32>
  %label = graph.input "label" : tensor<128xi64>

  // nn.Linear's default initialisation: kaiming_uniform(a = sqrt(5)) for
  // weights, which bounds them by 1/sqrt(fan_in).
  %w1 = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<256x784xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<256xf32>
  %w2 = graph.param "fc2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<128x256xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<128xf32>
  %w3 = graph.param "fc3.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<10x128xf32>
  %b3 = graph.param "fc3.bias" init(#graph.zeros) : tensor<10xf32>

  %h1 = graph.linear %image, %w1, %b1 : tensor<128x784xf32>, tensor<256x784xf32>, tensor<256xf32> -> tensor<128x256xf32>
  %a1 = graph.relu %h1 : tensor<128x256xf32>
  %h2 = graph.linear %a1, %w2, %b2 : tensor<128x256xf32>, tensor<128x256xf32>, tensor<128xf32> -> tensor<128x128xf32>
  %a2 = graph.relu %h2 : tensor<128x128xf32>
  %logits = graph.linear %a2, %w3, %b3 : tensor<128x128xf32>, tensor<10x128xf32>, tensor<10xf32> -> tensor<128x10xf32>
  %loss = graph.cross_entropy %logits, %label : tensor<128x10xf32>, tensor<128xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, logits = %logits : tensor<128x10xf32>
}

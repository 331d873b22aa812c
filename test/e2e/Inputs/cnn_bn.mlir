// A small CNN with batch_norm (2-D after the conv, 1-D after the first
// linear) for test/e2e/batch-norm.test: 32 images 1x8x8, 10 classes. Both
// keep PyTorch's num_batches_tracked (checkpoint-torch.test loads it).
graph.model @cnn_bn {
  %image = graph.input "image" : tensor<32x1x8x8xf32>
  %label = graph.input "label" : tensor<32xi64>

  %cw = graph.param "conv.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<4x1x3x3xf32>
  %bn1w = graph.param "bn1.weight" init(#graph.ones) : tensor<4xf32>
  %bn1b = graph.param "bn1.bias" init(#graph.zeros) : tensor<4xf32>
  %bn1m = graph.buffer "bn1.running_mean" init(#graph.zeros) : tensor<4xf32>
  %bn1v = graph.buffer "bn1.running_var" init(#graph.ones) : tensor<4xf32>
  %f1w = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<16x256xf32>
  %bn2w = graph.param "bn2.weight" init(#graph.ones) : tensor<16xf32>
  %bn2b = graph.param "bn2.bias" init(#graph.zeros) : tensor<16xf32>
  %bn2m = graph.buffer "bn2.running_mean" init(#graph.zeros) : tensor<16xf32>
  %bn2v = graph.buffer "bn2.running_var" init(#graph.ones) : tensor<16xf32>
  %f2w = graph.param "fc2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<10x16xf32>
  %f2b = graph.param "fc2.bias" init(#graph.zeros) : tensor<10xf32>

  %c = graph.conv2d %image, %cw {padding = array<i64: 1, 1>} : tensor<32x1x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<32x4x8x8xf32>
  %n1 = graph.batch_norm %c, %bn1m, %bn1v, %bn1w, %bn1b {num_batches_tracked = "bn1.num_batches_tracked"} : tensor<32x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<32x4x8x8xf32>
  %r1 = graph.relu %n1 : tensor<32x4x8x8xf32>
  %flat = graph.reshape %r1 : tensor<32x4x8x8xf32> -> tensor<32x256xf32>
  %h = graph.linear %flat, %f1w : tensor<32x256xf32>, tensor<16x256xf32> -> tensor<32x16xf32>
  %n2 = graph.batch_norm %h, %bn2m, %bn2v, %bn2w, %bn2b {momentum = 0.2, num_batches_tracked = "bn2.num_batches_tracked"} : tensor<32x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<32x16xf32>
  %r2 = graph.relu %n2 : tensor<32x16xf32>
  %logits = graph.linear %r2, %f2w, %f2b : tensor<32x16xf32>, tensor<10x16xf32>, tensor<10xf32> -> tensor<32x10xf32>
  %loss = graph.cross_entropy %logits, %label : tensor<32x10xf32>, tensor<32xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, logits = %logits : tensor<32x10xf32>
}

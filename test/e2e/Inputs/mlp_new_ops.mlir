// A small MLP built from the activations and pointwise ops of issue 13
// (e2e/new-ops.test): silu, leaky_relu, elu (SELU), clamp, abs, erf, sin,
// cos, softplus, reciprocal, maximum, minimum, where and masked_fill
// (integer inputs "keep" and "drop" of 0/1), all fused into elementwise
// loops.
graph.model @mlp_new_ops {
  %image = graph.input "image" : tensor<64x32xf32>
  %label = graph.input "label" : tensor<64xi64>
  %keep = graph.input "keep" : tensor<64x1xi64>
  %drop = graph.input "drop" : tensor<64x64xi64>
  %w1 = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<64x32xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<64xf32>
  %w2 = graph.param "fc2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<64x64xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<64xf32>
  %w3 = graph.param "fc3.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<10x64xf32>
  %b3 = graph.param "fc3.bias" init(#graph.zeros) : tensor<10xf32>
  %floor = graph.param "floor" init(#graph.constant<value = -0.5>) : tensor<64xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %h1 = graph.linear %image, %w1, %b1 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<64x64xf32>
  %a1 = graph.silu %h1 : tensor<64x64xf32>
  %h2 = graph.linear %a1, %w2, %b2 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xf32>
  %lk = graph.leaky_relu %h2 {negative_slope = 0.1} : tensor<64x64xf32>
  %cl = graph.clamp %lk {min = -2.0, max = 2.0} : tensor<64x64xf32>
  %mx = graph.maximum %cl, %floor : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xf32>
  %el = graph.elu %h2 {alpha = 1.6732632423543772, scale = 1.0507009873554805} : tensor<64x64xf32>
  %er = graph.erf %el : tensor<64x64xf32>
  %sn = graph.sin %er : tensor<64x64xf32>
  %cs = graph.cos %h2 : tensor<64x64xf32>
  %ab = graph.abs %cs : tensor<64x64xf32>
  %mn = graph.minimum %sn, %ab : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sp = graph.softplus %h2 {beta = 2.0} : tensor<64x64xf32>
  %den = graph.add %sp, %one : tensor<64x64xf32>, tensor<f32> -> tensor<64x64xf32>
  %rc = graph.reciprocal %den : tensor<64x64xf32>
  %g = graph.mul %mn, %rc : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sel = graph.where %keep, %mx, %g : tensor<64x1xi64>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %a2 = graph.masked_fill %sel, %drop {value = 0.25} : tensor<64x64xf32>, tensor<64x64xi64> -> tensor<64x64xf32>
  %logits = graph.linear %a2, %w3, %b3 : tensor<64x64xf32>, tensor<10x64xf32>, tensor<10xf32> -> tensor<64x10xf32>
  %loss = graph.cross_entropy %logits, %label : tensor<64x10xf32>, tensor<64xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, logits = %logits : tensor<64x10xf32>
}

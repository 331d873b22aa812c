// Every graph op parses, verifies, prints and parses again (custom and
// generic forms).
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: graph.model @structure
// CHECK: %[[X:.*]] = graph.input "x" : tensor<8x4xf32>
// CHECK: %[[Y:.*]] = graph.input "y" : tensor<8xi64>
// CHECK: %[[W:.*]] = graph.param "w" init(#graph.normal<std = 0.02>) : tensor<3x4xf32>
// CHECK: %[[B:.*]] = graph.param "b" init(#graph.zeros) : tensor<3xf32>
// CHECK: %[[Z:.*]] = graph.linear %[[X]], %[[W]], %[[B]] : tensor<8x4xf32>, tensor<3x4xf32>, tensor<3xf32> -> tensor<8x3xf32>
// CHECK: %[[L:.*]] = graph.cross_entropy %[[Z]], %[[Y]] : tensor<8x3xf32>, tensor<8xi64> -> tensor<f32>
// CHECK: graph.output loss = %[[L]] : tensor<f32>, logits = %[[Z]] : tensor<8x3xf32>
graph.model @structure {
  %x = graph.input "x" : tensor<8x4xf32>
  %y = graph.input "y" : tensor<8xi64>
  %w = graph.param "w" init(#graph.normal<std = 0.02>) : tensor<3x4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<3xf32>
  %z = graph.linear %x, %w, %b : tensor<8x4xf32>, tensor<3x4xf32>, tensor<3xf32> -> tensor<8x3xf32>
  %l = graph.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi64> -> tensor<f32>
  graph.output loss = %l : tensor<f32>, logits = %z : tensor<8x3xf32>
}

// -----

// CHECK-LABEL: graph.model @initializers
// CHECK: init(#graph.zeros)
// CHECK: init(#graph.ones)
// CHECK: init(#graph.constant<value = 0.5>)
// CHECK: init(#graph.normal<mean = 1.0, std = 2.0>)
// CHECK: init(#graph.uniform<a = -1.0, b = 3.0>)
// CHECK: init(#graph.xavier_uniform)
// CHECK: init(#graph.xavier_normal<gain = 2.0>)
// CHECK: init(#graph.kaiming_uniform<a = 2.23606797749979>)
// CHECK: init(#graph.kaiming_normal<mode = "fan_out", nonlinearity = "relu">)
// CHECK: init(#graph.trunc_normal<std = 0.02, a = -0.04, b = 0.04>)
graph.model @initializers {
  %0 = graph.param "p0" init(#graph.zeros) : tensor<2x2xf32>
  %1 = graph.param "p1" init(#graph.ones) : tensor<2x2xf32>
  %2 = graph.param "p2" init(#graph.constant<value = 0.5>) : tensor<2x2xf32>
  %3 = graph.param "p3" init(#graph.normal<mean = 1.0, std = 2.0>) : tensor<2x2xf32>
  %4 = graph.param "p4" init(#graph.uniform<a = -1.0, b = 3.0>) : tensor<2x2xf32>
  %5 = graph.param "p5" init(#graph.xavier_uniform) : tensor<2x2xf32>
  %6 = graph.param "p6" init(#graph.xavier_normal<gain = 2.0>) : tensor<2x2xf32>
  %7 = graph.param "p7" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<2x2xf32>
  %8 = graph.param "p8" init(#graph.kaiming_normal<mode = "fan_out", nonlinearity = "relu">) : tensor<2x2x3x3xf32>
  %9 = graph.param "p9" init(#graph.trunc_normal<std = 0.02, a = -0.04, b = 0.04>) : tensor<2x2xf32>
  %s = graph.reduce_sum %0 : tensor<2x2xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @linalg
graph.model @linalg {
  %a = graph.input "a" : tensor<4x8xf16>
  %b = graph.input "b" : tensor<8x16xf16>
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
  %c = graph.matmul %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
  %p = graph.input "p" : tensor<2x3x4x8xbf16>
  %q = graph.input "q" : tensor<2x3x8x5xbf16>
  // CHECK: graph.batch_matmul %{{.*}}, %{{.*}} : tensor<2x3x4x8xbf16>, tensor<2x3x8x5xbf16> -> tensor<2x3x4x5xbf16>
  %r = graph.batch_matmul %p, %q : tensor<2x3x4x8xbf16>, tensor<2x3x8x5xbf16> -> tensor<2x3x4x5xbf16>
  %x = graph.input "x" : tensor<2x5x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<3x8xf32>
  // CHECK: graph.linear %{{.*}}, %{{.*}} : tensor<2x5x8xf32>, tensor<3x8xf32> -> tensor<2x5x3xf32>
  %y = graph.linear %x, %w : tensor<2x5x8xf32>, tensor<3x8xf32> -> tensor<2x5x3xf32>
  %l = graph.reduce_mean %y : tensor<2x5x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @conv
graph.model @conv {
  %x = graph.input "x" : tensor<2x4x9x9xf32>
  %w = graph.param "w" init(#graph.kaiming_uniform) : tensor<6x2x3x3xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<6xf32>
  // CHECK: graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = array<i64: 2, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<2x6x4x5xf32>
  %y = graph.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 2, 1>, groups = 2} : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<2x6x4x5xf32>
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x7x7xf32>
  %y2 = graph.conv2d %x, %w {groups = 2} : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x7x7xf32>
  // CHECK: graph.max_pool2d %{{.*}} {kernel_size = array<i64: 2, 2>} : tensor<2x6x4x5xf32> -> tensor<2x6x2x2xf32>
  %m = graph.max_pool2d %y {kernel_size = array<i64: 2, 2>} : tensor<2x6x4x5xf32> -> tensor<2x6x2x2xf32>
  // CHECK: graph.avg_pool2d %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<2x6x4x5xf32> -> tensor<2x6x4x5xf32>
  %a = graph.avg_pool2d %y {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>} : tensor<2x6x4x5xf32> -> tensor<2x6x4x5xf32>
  %l = graph.reduce_sum %m : tensor<2x6x2x2xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @elementwise
graph.model @elementwise {
  %x = graph.input "x" : tensor<4x8xf32>
  %b = graph.input "b" : tensor<8xf32>
  %c = graph.input "c" : tensor<4x1xf32>
  // CHECK: graph.add {{.*}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %0 = graph.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: graph.sub {{.*}} : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = graph.sub %c, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: graph.mul
  %2 = graph.mul %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.div
  %3 = graph.div %2, %c : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  // CHECK: graph.neg %{{.*}} : tensor<4x8xf32>
  %4 = graph.neg %3 : tensor<4x8xf32>
  // CHECK: graph.relu
  %5 = graph.relu %4 : tensor<4x8xf32>
  // CHECK: graph.gelu %{{.*}} : tensor<4x8xf32>
  %6 = graph.gelu %5 : tensor<4x8xf32>
  // CHECK: graph.gelu %{{.*}} {approximate = "tanh"} : tensor<4x8xf32>
  %7 = graph.gelu %6 {approximate = "tanh"} : tensor<4x8xf32>
  // CHECK: graph.tanh
  %8 = graph.tanh %7 : tensor<4x8xf32>
  // CHECK: graph.sigmoid
  %9 = graph.sigmoid %8 : tensor<4x8xf32>
  // CHECK: graph.exp
  %10 = graph.exp %9 : tensor<4x8xf32>
  // CHECK: graph.log
  %11 = graph.log %10 : tensor<4x8xf32>
  // CHECK: graph.sqrt
  %12 = graph.sqrt %10 : tensor<4x8xf32>
  // CHECK: graph.rsqrt
  %13 = graph.rsqrt %12 : tensor<4x8xf32>
  // CHECK: graph.pow %{{.*}} {exponent = 3.000000e+00 : f64} : tensor<4x8xf32>
  %14 = graph.pow %13 {exponent = 3.0} : tensor<4x8xf32>
  // CHECK: graph.dropout %{{.*}} {p = 1.000000e-01 : f64} : tensor<4x8xf32>
  %15 = graph.dropout %14 {p = 0.1} : tensor<4x8xf32>
  // CHECK: graph.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf16>
  %16 = graph.cast %15 : tensor<4x8xf32> -> tensor<4x8xf16>
  // CHECK: graph.cast %{{.*}} : tensor<4x8xf16> -> tensor<4x8xbf16>
  %17 = graph.cast %16 : tensor<4x8xf16> -> tensor<4x8xbf16>
  // CHECK: graph.relu %{{.*}} {precision = "fp32"} : tensor<4x8xbf16>
  %18 = graph.relu %17 {precision = "fp32"} : tensor<4x8xbf16>
  %19 = graph.cast %18 : tensor<4x8xbf16> -> tensor<4x8xf32>
  %l = graph.reduce_sum %19 : tensor<4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @norms
graph.model @norms {
  %x = graph.input "x" : tensor<2x3x8xf32>
  %g = graph.param "g" init(#graph.ones) : tensor<8xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<8xf32>
  // CHECK: graph.softmax %{{.*}} {axis = -1 : i64} : tensor<2x3x8xf32>
  %0 = graph.softmax %x {axis = -1} : tensor<2x3x8xf32>
  // CHECK: graph.log_softmax %{{.*}} {axis = 1 : i64} : tensor<2x3x8xf32>
  %1 = graph.log_softmax %0 {axis = 1} : tensor<2x3x8xf32>
  // CHECK: graph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  %2 = graph.layer_norm %1, %g, %b : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  // CHECK: graph.layer_norm %{{.*}} {eps = 1.000000e-03 : f64} : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %3 = graph.layer_norm %2 {eps = 1.0e-3} : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  // CHECK: graph.rms_norm %{{.*}}, %{{.*}} : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  %4 = graph.rms_norm %3, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  %l = graph.reduce_max %4 : tensor<2x3x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @shape
graph.model @shape {
  %ids = graph.input "ids" : tensor<2x5xi32>
  %table = graph.param "table" init(#graph.normal) : tensor<10x4xf32>
  // CHECK: graph.embedding %{{.*}}, %{{.*}} : tensor<2x5xi32>, tensor<10x4xf32> -> tensor<2x5x4xf32>
  %e = graph.embedding %ids, %table : tensor<2x5xi32>, tensor<10x4xf32> -> tensor<2x5x4xf32>
  // CHECK: graph.reshape %{{.*}} : tensor<2x5x4xf32> -> tensor<10x4xf32>
  %r = graph.reshape %e : tensor<2x5x4xf32> -> tensor<10x4xf32>
  // CHECK: graph.transpose %{{.*}} {perm = array<i64: 1, 0>} : tensor<10x4xf32> -> tensor<4x10xf32>
  %t = graph.transpose %r {perm = array<i64: 1, 0>} : tensor<10x4xf32> -> tensor<4x10xf32>
  // CHECK: graph.slice %{{.*}} {limits = array<i64: 4, 9>, starts = array<i64: 1, 0>, strides = array<i64: 1, 3>} : tensor<4x10xf32> -> tensor<3x3xf32>
  %s = graph.slice %t {starts = array<i64: 1, 0>, limits = array<i64: 4, 9>, strides = array<i64: 1, 3>} : tensor<4x10xf32> -> tensor<3x3xf32>
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<3x3xf32>, tensor<3x3xf32> -> tensor<3x6xf32>
  %c = graph.concat %s, %s {axis = 1} : tensor<3x3xf32>, tensor<3x3xf32> -> tensor<3x6xf32>
  // Each input transposed by perm, then joined: [2,5,4] -> [5,4,2] twice.
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 2 : i64, perm = array<i64: 1, 2, 0>} : tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<5x4x4xf32>
  %cp = graph.concat %e, %e {axis = 2, perm = array<i64: 1, 2, 0>} : tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<5x4x4xf32>
  // CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: -1>, keepdim = true} : tensor<3x6xf32> -> tensor<3x1xf32>
  %k = graph.reduce_sum %c {axes = array<i64: -1>, keepdim = true} : tensor<3x6xf32> -> tensor<3x1xf32>
  // CHECK: graph.reduce_max %{{.*}} {axes = array<i64: 0>} : tensor<3x1xf32> -> tensor<1xf32>
  %m = graph.reduce_max %k {axes = array<i64: 0>} : tensor<3x1xf32> -> tensor<1xf32>
  // CHECK: graph.constant dense<2.000000e+00> : tensor<1xf32>
  %two = graph.constant dense<2.0> : tensor<1xf32>
  %d = graph.mul %m, %two : tensor<1xf32>, tensor<1xf32> -> tensor<1xf32>
  %l = graph.reduce_mean %d : tensor<1xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @losses_and_attention
graph.model @losses_and_attention {
  %q = graph.input "q" : tensor<2x4x16x8xf32>
  %k = graph.input "k" : tensor<2x4x12x8xf32>
  %v = graph.input "v" : tensor<2x4x12x6xf32>
  // CHECK: graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 5.000000e-01 : f64} : tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x6xf32> -> tensor<2x4x16x6xf32>
  %o = graph.scaled_dot_product_attention %q, %k, %v {causal, scale = 0.5} : tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x6xf32> -> tensor<2x4x16x6xf32>
  %t = graph.input "t" : tensor<2x4x16x6xf32>
  // CHECK: graph.mse_loss %{{.*}}, %{{.*}} : tensor<2x4x16x6xf32>, tensor<2x4x16x6xf32> -> tensor<f32>
  %mse = graph.mse_loss %o, %t : tensor<2x4x16x6xf32>, tensor<2x4x16x6xf32> -> tensor<f32>
  %y = graph.input "y" : tensor<2x4x16xi64>
  // CHECK: graph.cross_entropy %{{.*}}, %{{.*}} {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64} : tensor<2x4x16x6xf32>, tensor<2x4x16xi64> -> tensor<f32>
  %ce = graph.cross_entropy %o, %y {ignore_index = 0, label_smoothing = 0.1} : tensor<2x4x16x6xf32>, tensor<2x4x16xi64> -> tensor<f32>
  %l = graph.add %mse, %ce : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>, attention = %o : tensor<2x4x16x6xf32>
}

// -----

// CHECK-LABEL: graph.model @activations_and_math
graph.model @activations_and_math {
  %x = graph.input "x" : tensor<4x8xf32>
  %b = graph.input "b" : tensor<8xf32>
  // CHECK: graph.silu %{{.*}} : tensor<4x8xf32>
  %0 = graph.silu %x : tensor<4x8xf32>
  // CHECK: graph.leaky_relu %{{.*}} : tensor<4x8xf32>
  %1 = graph.leaky_relu %0 : tensor<4x8xf32>
  // CHECK: graph.leaky_relu %{{.*}} {negative_slope = 2.000000e-01 : f64} : tensor<4x8xf32>
  %2 = graph.leaky_relu %1 {negative_slope = 0.2} : tensor<4x8xf32>
  // CHECK: graph.elu %{{.*}} {alpha = 1.6732632423543772 : f64, scale = 1.0507009873554805 : f64} : tensor<4x8xf32>
  %elu = graph.elu %2 {alpha = 1.6732632423543772, scale = 1.0507009873554805} : tensor<4x8xf32>
  // CHECK: graph.softplus %{{.*}} : tensor<4x8xf32>
  %3 = graph.softplus %2 : tensor<4x8xf32>
  // CHECK: graph.softplus %{{.*}} {beta = 2.000000e+00 : f64, threshold = 1.000000e+01 : f64} : tensor<4x8xf32>
  %4 = graph.softplus %3 {beta = 2.0, threshold = 10.0} : tensor<4x8xf32>
  // CHECK: graph.abs %{{.*}} : tensor<4x8xf32>
  %5 = graph.abs %4 : tensor<4x8xf32>
  // CHECK: graph.clamp %{{.*}} {max = 1.000000e+00 : f64, min = -1.000000e+00 : f64} : tensor<4x8xf32>
  %6 = graph.clamp %5 {min = -1.0, max = 1.0} : tensor<4x8xf32>
  // CHECK: graph.clamp %{{.*}} {min = 0.000000e+00 : f64} : tensor<4x8xf32>
  %7 = graph.clamp %6 {min = 0.0} : tensor<4x8xf32>
  // CHECK: graph.clamp %{{.*}} {max = 5.000000e-01 : f64} : tensor<4x8xf32>
  %8 = graph.clamp %7 {max = 0.5} : tensor<4x8xf32>
  // CHECK: graph.erf %{{.*}} : tensor<4x8xf32>
  %9 = graph.erf %8 : tensor<4x8xf32>
  // CHECK: graph.sin %{{.*}} : tensor<4x8xf32>
  %10 = graph.sin %9 : tensor<4x8xf32>
  // CHECK: graph.cos %{{.*}} : tensor<4x8xf32>
  %11 = graph.cos %10 : tensor<4x8xf32>
  // CHECK: graph.reciprocal %{{.*}} : tensor<4x8xf32>
  %12 = graph.reciprocal %11 : tensor<4x8xf32>
  // CHECK: graph.maximum %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %13 = graph.maximum %12, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: graph.minimum %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %14 = graph.minimum %b, %13 : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %l = graph.reduce_sum %14 : tensor<4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @select
graph.model @select {
  %x = graph.input "x" : tensor<4x8xf16>
  %y = graph.input "y" : tensor<8xf16>
  %c = graph.input "c" : tensor<4x1xi64>
  %m = graph.input "m" : tensor<8xi32>
  // CHECK: graph.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x1xi64>, tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %0 = graph.where %c, %x, %y : tensor<4x1xi64>, tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  // CHECK: graph.masked_fill %{{.*}}, %{{.*}} {value = -1.000000e+04 : f64} : tensor<4x8xf16>, tensor<8xi32> -> tensor<4x8xf16>
  %1 = graph.masked_fill %0, %m {value = -1.0e4} : tensor<4x8xf16>, tensor<8xi32> -> tensor<4x8xf16>
  %l = graph.reduce_sum %1 : tensor<4x8xf16> -> tensor<f16>
  graph.output loss = %l : tensor<f16>
}

// -----

// CHECK-LABEL: graph.model @regression_losses
graph.model @regression_losses {
  %p = graph.input "p" : tensor<8x4xf32>
  %t = graph.input "t" : tensor<8x4xf32>
  // CHECK: graph.l1_loss %{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>
  %0 = graph.l1_loss %p, %t : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>
  // CHECK: graph.smooth_l1_loss %{{.*}}, %{{.*}} {beta = 5.000000e-01 : f64, reduction = "sum"} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>
  %1 = graph.smooth_l1_loss %p, %t {beta = 0.5, reduction = "sum"} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>
  // CHECK: graph.huber_loss %{{.*}}, %{{.*}} {delta = 2.000000e+00 : f64, reduction = "none"} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %2 = graph.huber_loss %p, %t {delta = 2.0, reduction = "none"} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %3 = graph.reduce_sum %2 : tensor<8x4xf32> -> tensor<f32>
  %4 = graph.add %0, %1 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %3, %4 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// RUN: ampc-opt --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: ampc-opt --split-input-file --verify-diagnostics %s | ampc-opt --split-input-file | FileCheck %s

// Every backward op round-trips in its spelled-type format.
// CHECK-LABEL: func.func @all
func.func @all(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<8xf32>,
               %img: tensor<2x4x6x6xf32>, %w: tensor<6x2x3x3xf32>,
               %gc: tensor<2x6x3x3xf32>, %gp: tensor<2x4x3x3xf32>,
               %ids: tensor<4x5xi64>, %ge: tensor<4x5x8xf32>,
               %labels: tensor<4xi64>, %s: tensor<f32>, %gs: tensor<4x4xf32>,
               %gr: tensor<4xf32>, %q: tensor<1x2x3x8xf32>,
               %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x4xf32>,
               %ga: tensor<1x2x3x4xf32>) {
  // CHECK: graph.broadcast_to %{{.*}} : tensor<8xf32> -> tensor<2x4x8xf32>
  %0 = graph.broadcast_to %b : tensor<8xf32> -> tensor<2x4x8xf32>
  // CHECK: graph.relu_backward %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = graph.relu_backward %x, %g : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.gelu_backward %{{.*}}, %{{.*}} {approximate = "tanh"} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = graph.gelu_backward %x, %g {approximate = "tanh"} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.gelu_backward %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %3 = graph.gelu_backward %x, %g : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.conv2d_backward_input %{{.*}}, %{{.*}} {groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x6x3x3xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x6x6xf32>
  %4 = graph.conv2d_backward_input %gc, %w {groups = 2, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x6x3x3xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x6x6xf32>
  // CHECK: graph.conv2d_backward_weight %{{.*}}, %{{.*}} {groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x4x6x6xf32>, tensor<2x6x3x3xf32> -> tensor<6x2x3x3xf32>
  %5 = graph.conv2d_backward_weight %img, %gc {groups = 2, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x4x6x6xf32>, tensor<2x6x3x3xf32> -> tensor<6x2x3x3xf32>
  // CHECK: graph.max_pool2d_backward %{{.*}}, %{{.*}} {kernel_size = array<i64: 2, 2>} : tensor<2x4x6x6xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x6x6xf32>
  %6 = graph.max_pool2d_backward %img, %gp {kernel_size = array<i64: 2, 2>} : tensor<2x4x6x6xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x6x6xf32>
  // CHECK: graph.avg_pool2d_backward %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x4x3x3xf32> -> tensor<2x4x6x6xf32>
  %7 = graph.avg_pool2d_backward %gp {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x4x3x3xf32> -> tensor<2x4x6x6xf32>
  // CHECK: graph.embedding_backward %{{.*}}, %{{.*}} : tensor<4x5xi64>, tensor<4x5x8xf32> -> tensor<100x8xf32>
  %8 = graph.embedding_backward %ids, %ge : tensor<4x5xi64>, tensor<4x5x8xf32> -> tensor<100x8xf32>
  // CHECK: graph.embedding_backward %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x5xi64>, tensor<4x5x8xf32>, tensor<100x8xbf16> -> tensor<100x8xf32>
  %einit = graph.cast %8 : tensor<100x8xf32> -> tensor<100x8xbf16>
  %ei = graph.embedding_backward %ids, %ge, %einit : tensor<4x5xi64>, tensor<4x5x8xf32>, tensor<100x8xbf16> -> tensor<100x8xf32>
  // CHECK: graph.cross_entropy_backward %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = 3 : i64, label_smoothing = 1.000000e-01 : f64} : tensor<4x8xf32>, tensor<4xi64>, tensor<f32> -> tensor<4x8xf32>
  %9 = graph.cross_entropy_backward %x, %labels, %s {ignore_index = 3, label_smoothing = 0.1} : tensor<4x8xf32>, tensor<4xi64>, tensor<f32> -> tensor<4x8xf32>
  // CHECK: graph.slice_backward %{{.*}} {limits = array<i64: 4, 8>, starts = array<i64: 0, 1>, strides = array<i64: 1, 2>} : tensor<4x4xf32> -> tensor<4x8xf32>
  %10 = graph.slice_backward %gs {starts = array<i64: 0, 1>, limits = array<i64: 4, 8>, strides = array<i64: 1, 2>} : tensor<4x4xf32> -> tensor<4x8xf32>
  // CHECK: graph.reduce_max_backward %{{.*}}, %{{.*}} {axes = array<i64: -1>} : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  %11 = graph.reduce_max_backward %x, %gr {axes = array<i64: -1>} : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = graph.layer_norm_backward %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-03 : f64} : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %12:3 = graph.layer_norm_backward %x, %b, %g {eps = 1.0e-3} : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: %{{.*}}, %{{.*}} = graph.rms_norm_backward %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  %13:2 = graph.rms_norm_backward %x, %b, %g : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = graph.scaled_dot_product_attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 5.000000e-01 : f64} : tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>
  %14:3 = graph.scaled_dot_product_attention_backward %q, %k, %v, %ga {causal, scale = 0.5} : tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>
  // CHECK: graph.silu_backward %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %15 = graph.silu_backward %x, %g : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.leaky_relu_backward %{{.*}}, %{{.*}} {negative_slope = 2.000000e-01 : f64} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %16 = graph.leaky_relu_backward %x, %g {negative_slope = 0.2} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.elu_backward %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f64, input_scale = 2.000000e+00 : f64} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %elu = graph.elu_backward %x, %g {alpha = 0.5, input_scale = 2.0} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.softplus_backward %{{.*}}, %{{.*}} {beta = 2.000000e+00 : f64, threshold = 1.000000e+01 : f64} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %17 = graph.softplus_backward %x, %g {beta = 2.0, threshold = 10.0} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.clamp_backward %{{.*}}, %{{.*}} {min = -1.000000e+00 : f64} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %18 = graph.clamp_backward %x, %g {min = -1.0} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.maximum_backward %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %19 = graph.maximum_backward %x, %g, %g : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @bad_broadcast(%x: tensor<3xf32>) {
  // expected-error @+1 {{'graph.broadcast_to' op cannot broadcast [3] to [4, 2]}}
  %0 = graph.broadcast_to %x : tensor<3xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @relu_types(%x: tensor<4xf32>, %g: tensor<4xf16>) {
  // expected-error @+1 {{'graph.relu_backward' op g must have the type of x 'tensor<4xf32>', got 'tensor<4xf16>'}}
  %0 = graph.relu_backward %x, %g : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @gelu_mode(%x: tensor<4xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "erf"}}
  %0 = graph.gelu_backward %x, %x {approximate = "erf"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

// A stride-2 conv of 6x6 with pad 1 gives 3x3, not 4x4.
func.func @conv_input_shape(%g: tensor<2x6x4x4xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d_backward_input' op g (the conv2d result's shape) must be [2, 6, 3, 3], got [2, 6, 4, 4]}}
  %0 = graph.conv2d_backward_input %g, %w {groups = 2, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x6x6xf32>
  return
}

// -----

func.func @conv_weight_groups(%x: tensor<2x4x6x6xf32>, %g: tensor<2x6x4x4xf32>) {
  // expected-error @+1 {{'graph.conv2d_backward_weight' op groups 1 do not fit input [2, 4, 6, 6] and weight [6, 2, 3, 3]}}
  %0 = graph.conv2d_backward_weight %x, %g : tensor<2x4x6x6xf32>, tensor<2x6x4x4xf32> -> tensor<6x2x3x3xf32>
  return
}

// -----

func.func @maxpool_g(%x: tensor<1x1x4x4xf32>, %g: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'graph.max_pool2d_backward' op g (the pool result's shape) must be [1, 1, 2, 2], got [1, 1, 3, 3]}}
  %0 = graph.max_pool2d_backward %x, %g {kernel_size = array<i64: 2, 2>} : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @avgpool_pad(%g: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d_backward' op kernel [2, 2] and padding [2, 2] do not fit the input [1, 1, 4, 4]}}
  %0 = graph.avg_pool2d_backward %g {kernel_size = array<i64: 2, 2>, padding = array<i64: 2, 2>} : tensor<1x1x3x3xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @embedding_g(%ids: tensor<4xi32>, %g: tensor<4x7xf32>) {
  // expected-error @+1 {{'graph.embedding_backward' op g (ids' shape + [D]) must be [4, 8], got [4, 7]}}
  %0 = graph.embedding_backward %ids, %g : tensor<4xi32>, tensor<4x7xf32> -> tensor<10x8xf32>
  return
}

// -----

func.func @embedding_init_shape(%ids: tensor<4xi32>, %g: tensor<4x8xf32>, %i: tensor<8x8xf32>) {
  // expected-error @+1 {{'graph.embedding_backward' op init (dtable's shape) must be [10, 8], got [8, 8]}}
  %0 = graph.embedding_backward %ids, %g, %i : tensor<4xi32>, tensor<4x8xf32>, tensor<8x8xf32> -> tensor<10x8xf32>
  return
}

// -----

func.func @embedding_init_half_table(%ids: tensor<4xi32>, %g: tensor<4x8xbf16>, %i: tensor<10x8xbf16>) {
  // expected-error @+1 {{'graph.embedding_backward' op with init, dtable must be f32, got 'tensor<10x8xbf16>'}}
  %0 = graph.embedding_backward %ids, %g, %i : tensor<4xi32>, tensor<4x8xbf16>, tensor<10x8xbf16> -> tensor<10x8xbf16>
  return
}

// -----

func.func @ce_scalar(%z: tensor<4x8xf32>, %y: tensor<4xi64>, %g: tensor<1xf32>) {
  // expected-error @+1 {{'graph.cross_entropy_backward' op g (the scalar loss cotangent) must be [], got [1]}}
  %0 = graph.cross_entropy_backward %z, %y, %g : tensor<4x8xf32>, tensor<4xi64>, tensor<1xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @ce_labels(%z: tensor<4x8xf32>, %y: tensor<8xi64>, %g: tensor<f32>) {
  // expected-error @+1 {{'graph.cross_entropy_backward' op labels (logits without the class axis) must be [4], got [8]}}
  %0 = graph.cross_entropy_backward %z, %y, %g : tensor<4x8xf32>, tensor<8xi64>, tensor<f32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_g(%g: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.slice_backward' op g (the slice result's shape) must be [4, 4], got [4, 3]}}
  %0 = graph.slice_backward %g {starts = array<i64: 0, 1>, limits = array<i64: 4, 8>, strides = array<i64: 1, 2>} : tensor<4x3xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_max_keepdim(%x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'graph.reduce_max_backward' op g (the reduce result's shape) must be [4, 1], got [4]}}
  %0 = graph.reduce_max_backward %x, %g {axes = array<i64: 1>, keepdim = true} : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_weight(%x: tensor<4x8xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'graph.layer_norm_backward' op weight must be [8], got [4]}}
  %0:3 = graph.layer_norm_backward %x, %w, %x : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// (An f16 dx is fine: the op computes in FP32 whatever its types.)
func.func @rms_norm_dx(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'graph.rms_norm_backward' op dx (x's shape) must be [4, 8], got [4, 4]}}
  %0:2 = graph.rms_norm_backward %x, %w, %x : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x4xf16>, tensor<8xf32>
  return
}

// -----

func.func @attention_g(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x4xf32>, %g: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'graph.scaled_dot_product_attention_backward' op g (the attention result's shape) must be [1, 2, 3, 4], got [1, 2, 3, 8]}}
  %0:3 = graph.scaled_dot_product_attention_backward %q, %k, %v, %g : tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>, tensor<1x2x3x8xf32> -> tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>
  return
}

// -----

func.func @maximum_backward_shape(%x: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'graph.maximum_backward' op b must have the type of a 'tensor<4x8xf32>', got 'tensor<8xf32>'}}
  %0 = graph.maximum_backward %x, %b, %x : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @clamp_backward_bounds(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs a min or a max attribute (or both)}}
  %0 = graph.clamp_backward %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @softplus_backward_beta(%x: tensor<4xf32>) {
  // expected-error @+1 {{beta must be nonzero}}
  %0 = graph.softplus_backward %x, %x {beta = 0.0} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// batch_norm's optional num_batches_tracked attribute (PyTorch's third
// BatchNorm buffer, kept by the runtime): it round-trips, and the verifier
// wants a string that is not a parameter's or buffer's name.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK: graph.batch_norm {{.*}}num_batches_tracked = "bn.num_batches_tracked"
graph.model @ok {
  %x = graph.input "x" : tensor<8x4xf32>
  %w = graph.param "bn.weight" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "bn.bias" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "bn.running_mean" init(#graph.zeros) : tensor<4xf32>
  %rv = graph.buffer "bn.running_var" init(#graph.ones) : tensor<4xf32>
  %y = graph.batch_norm %x, %rm, %rv, %w, %b {num_batches_tracked = "bn.num_batches_tracked"} : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %s = graph.reduce_sum %y : tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

graph.model @clash {
  %x = graph.input "x" : tensor<8x4xf32>
  %w = graph.param "bn.weight" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "bn.bias" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "bn.running_mean" init(#graph.zeros) : tensor<4xf32>
  %rv = graph.buffer "bn.running_var" init(#graph.ones) : tensor<4xf32>
  // expected-error @+1 {{num_batches_tracked "bn.running_var" is already a parameter or buffer name}}
  %y = graph.batch_norm %x, %rm, %rv, %w, %b {num_batches_tracked = "bn.running_var"} : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %s = graph.reduce_sum %y : tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

graph.model @not_a_string {
  %x = graph.input "x" : tensor<8x4xf32>
  %w = graph.param "bn.weight" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "bn.bias" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "bn.running_mean" init(#graph.zeros) : tensor<4xf32>
  %rv = graph.buffer "bn.running_var" init(#graph.ones) : tensor<4xf32>
  // expected-error @+1 {{num_batches_tracked must be a string}}
  %y = graph.batch_norm %x, %rm, %rv, %w, %b {num_batches_tracked = 3} : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %s = graph.reduce_sum %y : tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

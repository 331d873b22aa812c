// Verifier errors of packed_attention and its backward, one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

graph.model @heads_do_not_divide {
  %qkv = graph.input "qkv" : tensor<2x16x96xf32>
  // expected-error @+2 {{packed_attention: qkv's last dimension 96 is not 3 * heads * D for 5 heads}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.packed_attention %qkv {heads = 5 : i64} : tensor<2x16x96xf32> -> tensor<2x16x32xf32>
  %l = graph.reduce_sum %o : tensor<2x16x32xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @not_rank_3 {
  %qkv = graph.input "qkv" : tensor<2x16x4x24xf32>
  // expected-error @+2 {{packed_attention needs qkv [B, T, 3E], got [2, 16, 4, 24]}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.packed_attention %qkv {heads = 4 : i64} : tensor<2x16x4x24xf32> -> tensor<2x16x4x8xf32>
  %l = graph.reduce_sum %o : tensor<2x16x4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @wrong_result {
  %qkv = graph.input "qkv" : tensor<2x16x96xf32>
  // expected-error @+2 {{inferred type(s) 'tensor<2x16x32xf32>' are incompatible with return type(s) of operation 'tensor<2x16x96xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.packed_attention %qkv {heads = 4 : i64} : tensor<2x16x96xf32> -> tensor<2x16x96xf32>
  %l = graph.reduce_sum %o : tensor<2x16x96xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @backward_g_shape {
  %qkv = graph.input "qkv" : tensor<2x16x96xf32>
  %g = graph.input "g" : tensor<2x16x96xf32>
  // expected-error @+1 {{g (the attention result's shape)}}
  %d = graph.packed_attention_backward %qkv, %g {heads = 4 : i64} : tensor<2x16x96xf32>, tensor<2x16x96xf32> -> tensor<2x16x96xf32>
  %l = graph.reduce_sum %d : tensor<2x16x96xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @backward_dqkv_type {
  %qkv = graph.input "qkv" : tensor<2x16x96xf32>
  %g = graph.input "g" : tensor<2x16x32xf32>
  // expected-error @+1 {{dqkv}}
  %d = graph.packed_attention_backward %qkv, %g {heads = 4 : i64} : tensor<2x16x96xf32>, tensor<2x16x32xf32> -> tensor<2x16x96xbf16>
  %l = graph.reduce_sum %d : tensor<2x16x96xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @backward_heads {
  %qkv = graph.input "qkv" : tensor<2x16x96xf32>
  %g = graph.input "g" : tensor<2x16x32xf32>
  // expected-error @+1 {{packed_attention: qkv's last dimension 96 is not 3 * heads * D for 0 heads}}
  %d = graph.packed_attention_backward %qkv, %g {heads = 0 : i64} : tensor<2x16x96xf32>, tensor<2x16x32xf32> -> tensor<2x16x96xf32>
  %l = graph.reduce_sum %d : tensor<2x16x96xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

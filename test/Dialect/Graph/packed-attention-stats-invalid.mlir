// Verifier errors of packed_attention_stats and its backward, one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

graph.model @stats_not_f32 {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  // expected-error @+1 {{stats must be f32, got 'bf16'}}
  %o, %s = graph.packed_attention_stats %qkv {heads = 4 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>, tensor<2x4x16xbf16>
  %l = graph.reduce_sum %o : tensor<2x16x32xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @stats_shape {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  // expected-error @+1 {{stats ([B, heads, T]) must be [2, 4, 16], got [2, 16, 4]}}
  %o, %s = graph.packed_attention_stats %qkv {heads = 4 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>, tensor<2x16x4xf32>
  %l = graph.reduce_sum %o : tensor<2x16x32xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @result_shape {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  // expected-error @+1 {{the result must be [2, 16, 32], got [2, 16, 96]}}
  %o, %s = graph.packed_attention_stats %qkv {heads = 4 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x96xbf16>, tensor<2x4x16xf32>
  %l = graph.reduce_sum %o : tensor<2x16x96xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @heads {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  // expected-error @+1 {{packed_attention: qkv's last dimension 96 is not 3 * heads * D for 5 heads}}
  %o, %s = graph.packed_attention_stats %qkv {heads = 5 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>, tensor<2x5x16xf32>
  %l = graph.reduce_sum %o : tensor<2x16x32xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @backward_o_type {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %o = graph.input "o" : tensor<2x16x32xf32>
  %s = graph.input "s" : tensor<2x4x16xf32>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  // expected-error @+1 {{o must have the type of g}}
  %d = graph.packed_attention_stats_backward %qkv, %o, %s, %g {heads = 4 : i64} : tensor<2x16x96xbf16>, tensor<2x16x32xf32>, tensor<2x4x16xf32>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %l = graph.reduce_sum %d : tensor<2x16x96xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @backward_stats_shape {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %o = graph.input "o" : tensor<2x16x32xbf16>
  %s = graph.input "s" : tensor<2x4x8xf32>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  // expected-error @+1 {{stats ([B, heads, T]) must be [2, 4, 16], got [2, 4, 8]}}
  %d = graph.packed_attention_stats_backward %qkv, %o, %s, %g {heads = 4 : i64} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16>, tensor<2x4x8xf32>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %l = graph.reduce_sum %d : tensor<2x16x96xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @backward_dqkv_type {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %o = graph.input "o" : tensor<2x16x32xbf16>
  %s = graph.input "s" : tensor<2x4x16xf32>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  // expected-error @+1 {{dqkv must have the type of qkv}}
  %d = graph.packed_attention_stats_backward %qkv, %o, %s, %g {heads = 4 : i64} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16>, tensor<2x4x16xf32>, tensor<2x16x32xbf16> -> tensor<2x16x96xf32>
  %l = graph.reduce_sum %d : tensor<2x16x96xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @sdpa_stats_shape {
  %q = graph.input "q" : tensor<2x4x16x8xbf16>
  %k = graph.input "k" : tensor<2x2x16x8xbf16>
  // expected-error @+1 {{stats ([B, Hq, T]) must be [2, 4, 16], got [2, 2, 16]}}
  %o, %s = graph.scaled_dot_product_attention_stats %q, %k, %k : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x2x16xf32>
  %l = graph.reduce_sum %o : tensor<2x4x16x8xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @sdpa_stats_not_f32 {
  %q = graph.input "q" : tensor<2x4x16x8xbf16>
  // expected-error @+1 {{stats must be f32, got 'bf16'}}
  %o, %s = graph.scaled_dot_product_attention_stats %q, %q, %q : tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x4x16xbf16>
  %l = graph.reduce_sum %o : tensor<2x4x16x8xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @sdpa_stats_result {
  %q = graph.input "q" : tensor<2x4x16x8xbf16>
  // expected-error @+1 {{the result must be [2, 4, 16, 8], got [2, 4, 8, 16]}}
  %o, %s = graph.scaled_dot_product_attention_stats %q, %q, %q : tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16> -> tensor<2x4x8x16xbf16>, tensor<2x4x16xf32>
  %l = graph.reduce_sum %o : tensor<2x4x8x16xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

graph.model @sdpa_stats_backward_o {
  %q = graph.input "q" : tensor<2x4x16x8xbf16>
  %o = graph.input "o" : tensor<2x4x16x8xf32>
  %s = graph.input "s" : tensor<2x4x16xf32>
  // expected-error @+1 {{o must have the type of g}}
  %dq, %dk, %dv = graph.scaled_dot_product_attention_stats_backward %q, %q, %q, %o, %s, %q : tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>, tensor<2x4x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>
  %l = graph.reduce_sum %dq : tensor<2x4x16x8xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

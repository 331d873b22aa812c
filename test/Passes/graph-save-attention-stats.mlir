// graph-save-attention-stats: a packed_attention and its backward on the
// same qkv become packed_attention_stats (result + the f32 [B, heads, T]
// log-sum-exp) and packed_attention_stats_backward, which reads them.
// RUN: ampc-opt %s --split-input-file --graph-save-attention-stats | FileCheck %s

// The pair: the forward keeps its attributes (precision notes included),
// its users read the stats op's result, the backward reads o and stats.
// CHECK-LABEL: graph.model @pair
// CHECK: %[[O:.*]], %[[S:.*]] = graph.packed_attention_stats %[[QKV:[^ ]*]] {amp.precision = "bf16", causal, heads = 4 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>, tensor<2x4x16xf32>
// CHECK-NEXT: graph.reduce_sum %[[O]]
// CHECK: graph.packed_attention_stats_backward %[[QKV]], %[[O]], %[[S]], %{{.*}} {causal, heads = 4 : i64} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16>, tensor<2x4x16xf32>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
// CHECK-NOT: graph.packed_attention %
// CHECK-NOT: graph.packed_attention_backward
graph.model @pair {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  %o = graph.packed_attention %qkv {amp.precision = "bf16", heads = 4 : i64, causal} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %l0 = graph.reduce_sum %o : tensor<2x16x32xbf16> -> tensor<bf16>
  %d = graph.packed_attention_backward %qkv, %g {heads = 4 : i64, causal} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %l1 = graph.reduce_sum %d : tensor<2x16x96xbf16> -> tensor<bf16>
  %l = graph.add %l0, %l1 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// A forward alone (evaluation) and a backward alone are left as they are.
// CHECK-LABEL: graph.model @alone
// CHECK: graph.packed_attention %{{.*}} {causal, heads = 4 : i64}
// CHECK: graph.packed_attention_backward %{{.*}}, %{{.*}} {causal, heads = 4 : i64}
// CHECK-NOT: packed_attention_stats
graph.model @alone {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %qkv2 = graph.input "qkv2" : tensor<2x16x96xbf16>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  %o = graph.packed_attention %qkv {heads = 4 : i64, causal} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %l0 = graph.reduce_sum %o : tensor<2x16x32xbf16> -> tensor<bf16>
  %d = graph.packed_attention_backward %qkv2, %g {heads = 4 : i64, causal} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %l1 = graph.reduce_sum %d : tensor<2x16x96xbf16> -> tensor<bf16>
  %l = graph.add %l0, %l1 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// Another attention on the same qkv (other heads, not causal, another
// scale) is not the backward's forward; the one that is gets rewritten.
// CHECK-LABEL: graph.model @attributes
// CHECK: graph.packed_attention %{{.*}} {heads = 2 : i64} :
// CHECK: graph.packed_attention %{{.*}} {causal, heads = 4 : i64, scale = 5.000000e-01 : f64} :
// CHECK: %[[O:.*]], %[[S:.*]] = graph.packed_attention_stats %{{.*}} {causal, heads = 4 : i64} : {{.*}}, tensor<2x4x16xf32>
// CHECK: graph.packed_attention_stats_backward %{{.*}}, %[[O]], %[[S]], %{{.*}} {causal, heads = 4 : i64}
graph.model @attributes {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  %a = graph.packed_attention %qkv {heads = 2 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %b = graph.packed_attention %qkv {heads = 4 : i64, causal, scale = 0.5} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %o = graph.packed_attention %qkv {heads = 4 : i64, causal} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %ab = graph.add %a, %b : tensor<2x16x32xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x32xbf16>
  %abo = graph.add %ab, %o : tensor<2x16x32xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x32xbf16>
  %l0 = graph.reduce_sum %abo : tensor<2x16x32xbf16> -> tensor<bf16>
  %d = graph.packed_attention_backward %qkv, %g {heads = 4 : i64, causal} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %l1 = graph.reduce_sum %d : tensor<2x16x96xbf16> -> tensor<bf16>
  %l = graph.add %l0, %l1 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// A backward before its forward in the block (not something autodiff
// makes) is left alone: the statistics would not exist yet.
// CHECK-LABEL: graph.model @order
// CHECK-NOT: packed_attention_stats
graph.model @order {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  %d = graph.packed_attention_backward %qkv, %g {heads = 4 : i64, causal} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %o = graph.packed_attention %qkv {heads = 4 : i64, causal} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %l0 = graph.reduce_sum %o : tensor<2x16x32xbf16> -> tensor<bf16>
  %l1 = graph.reduce_sum %d : tensor<2x16x96xbf16> -> tensor<bf16>
  %l = graph.add %l0, %l1 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// Two backwards of one forward (two cotangents) share one stats op.
// CHECK-LABEL: graph.model @two_backwards
// CHECK-COUNT-1: graph.packed_attention_stats %
// CHECK-COUNT-2: graph.packed_attention_stats_backward
graph.model @two_backwards {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  %h = graph.input "h" : tensor<2x16x32xbf16>
  %o = graph.packed_attention %qkv {heads = 4 : i64, causal} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %l0 = graph.reduce_sum %o : tensor<2x16x32xbf16> -> tensor<bf16>
  %d = graph.packed_attention_backward %qkv, %g {heads = 4 : i64, causal} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %e = graph.packed_attention_backward %qkv, %h {heads = 4 : i64, causal} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %de = graph.add %d, %e : tensor<2x16x96xbf16>, tensor<2x16x96xbf16> -> tensor<2x16x96xbf16>
  %l1 = graph.reduce_sum %de : tensor<2x16x96xbf16> -> tensor<bf16>
  %l = graph.add %l0, %l1 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// Attention on separate q, k, v (grouped-query here): the forward becomes
// scaled_dot_product_attention_stats (stats f32 [B, Hq, T]) and the
// backward reads its o and stats.
// CHECK-LABEL: graph.model @sdpa
// CHECK: %[[O:.*]], %[[S:.*]] = graph.scaled_dot_product_attention_stats %[[Q:[^,]*]], %[[K:[^,]*]], %[[V:[^ ]*]] {amp.precision = "bf16", causal} : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>
// CHECK: graph.scaled_dot_product_attention_stats_backward %[[Q]], %[[K]], %[[V]], %[[O]], %[[S]], %{{.*}} {causal} : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16>
// CHECK-NOT: graph.scaled_dot_product_attention %
// CHECK-NOT: graph.scaled_dot_product_attention_backward
graph.model @sdpa {
  %q = graph.input "q" : tensor<2x4x16x8xbf16>
  %k = graph.input "k" : tensor<2x2x16x8xbf16>
  %v = graph.input "v" : tensor<2x2x16x8xbf16>
  %g = graph.input "g" : tensor<2x4x16x8xbf16>
  %o = graph.scaled_dot_product_attention %q, %k, %v {amp.precision = "bf16", causal} : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16> -> tensor<2x4x16x8xbf16>
  %l0 = graph.reduce_sum %o : tensor<2x4x16x8xbf16> -> tensor<bf16>
  %dq, %dk, %dv = graph.scaled_dot_product_attention_backward %q, %k, %v, %g {causal} : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x4x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16>
  %l1 = graph.reduce_sum %dq : tensor<2x4x16x8xbf16> -> tensor<bf16>
  %l2 = graph.reduce_sum %dk : tensor<2x2x16x8xbf16> -> tensor<bf16>
  %l3 = graph.reduce_sum %dv : tensor<2x2x16x8xbf16> -> tensor<bf16>
  %a = graph.add %l0, %l1 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  %b = graph.add %l2, %l3 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  %l = graph.add %a, %b : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// Left alone: a mask (on the forward and the backward), another scale, and
// other keys than the backward's.
// CHECK-LABEL: graph.model @sdpa_not
// CHECK-NOT: _stats
graph.model @sdpa_not {
  %q = graph.input "q" : tensor<1x2x4x8xbf16>
  %k = graph.input "k" : tensor<1x2x4x8xbf16>
  %k2 = graph.input "k2" : tensor<1x2x4x8xbf16>
  %v = graph.input "v" : tensor<1x2x4x8xbf16>
  %m = graph.input "m" : tensor<1x1x4x4xi64>
  %g = graph.input "g" : tensor<1x2x4x8xbf16>
  %o1 = graph.scaled_dot_product_attention %q, %k, %v mask %m : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x1x4x4xi64> -> tensor<1x2x4x8xbf16>
  %d1:3 = graph.scaled_dot_product_attention_backward %q, %k, %v, %g mask %m : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x1x4x4xi64> -> tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>
  %o2 = graph.scaled_dot_product_attention %q, %k, %v {scale = 0.5} : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %o3 = graph.scaled_dot_product_attention %q, %k2, %v : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %d2:3 = graph.scaled_dot_product_attention_backward %q, %k, %v, %g : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>
  %s1 = graph.add %o1, %o2 : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %s2 = graph.add %s1, %o3 : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %s3 = graph.add %s2, %d1#0 : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %s4 = graph.add %s3, %d2#0 : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %l = graph.reduce_sum %s4 : tensor<1x2x4x8xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

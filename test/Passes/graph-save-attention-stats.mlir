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

// packed_attention_stats and its backward parse, verify, print and parse
// again (custom and generic forms).
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: graph.model @stats
graph.model @stats {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  // CHECK: %[[O:.*]], %[[S:.*]] = graph.packed_attention_stats %{{.*}} {causal, heads = 4 : i64, scale = 2.500000e-01 : f64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>, tensor<2x4x16xf32>
  %o, %s = graph.packed_attention_stats %qkv {heads = 4 : i64, causal, scale = 0.25} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>, tensor<2x4x16xf32>
  // CHECK: graph.packed_attention_stats_backward %{{.*}}, %[[O]], %[[S]], %{{.*}} {causal, heads = 4 : i64, scale = 2.500000e-01 : f64} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16>, tensor<2x4x16xf32>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %d = graph.packed_attention_stats_backward %qkv, %o, %s, %g {heads = 4 : i64, causal, scale = 0.25} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16>, tensor<2x4x16xf32>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %l0 = graph.reduce_sum %o : tensor<2x16x32xbf16> -> tensor<bf16>
  %l1 = graph.reduce_sum %d : tensor<2x16x96xbf16> -> tensor<bf16>
  %l = graph.add %l0, %l1 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// CHECK-LABEL: graph.model @sdpa_stats
graph.model @sdpa_stats {
  %q = graph.input "q" : tensor<2x4x16x8xbf16>
  %k = graph.input "k" : tensor<2x2x16x8xbf16>
  %v = graph.input "v" : tensor<2x2x16x8xbf16>
  %g = graph.input "g" : tensor<2x4x16x8xbf16>
  // CHECK: %[[O:.*]], %[[S:.*]] = graph.scaled_dot_product_attention_stats %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 2.500000e-01 : f64} : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>
  %o, %s = graph.scaled_dot_product_attention_stats %q, %k, %v {causal, scale = 0.25} : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>
  // CHECK: graph.scaled_dot_product_attention_stats_backward %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %[[S]], %{{.*}} {causal, scale = 2.500000e-01 : f64}
  %dq, %dk, %dv = graph.scaled_dot_product_attention_stats_backward %q, %k, %v, %o, %s, %g {causal, scale = 0.25} : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16>
  %l0 = graph.reduce_sum %o : tensor<2x4x16x8xbf16> -> tensor<bf16>
  %l1 = graph.reduce_sum %dk : tensor<2x2x16x8xbf16> -> tensor<bf16>
  %l = graph.add %l0, %l1 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

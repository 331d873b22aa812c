// packed_attention and its backward parse, verify, print and parse again
// (custom and generic forms).
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: graph.model @packed
graph.model @packed {
  %qkv = graph.input "qkv" : tensor<2x16x96xbf16>
  %g = graph.input "g" : tensor<2x16x32xbf16>
  // CHECK: graph.packed_attention %{{.*}} {causal, heads = 4 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %o = graph.packed_attention %qkv {heads = 4 : i64, causal} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  // CHECK: graph.packed_attention %{{.*}} {heads = 2 : i64, scale = 2.500000e-01 : f64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %p = graph.packed_attention %qkv {heads = 2 : i64, scale = 0.25} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  // CHECK: graph.packed_attention_backward %{{.*}}, %{{.*}} {causal, heads = 4 : i64} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %d = graph.packed_attention_backward %qkv, %g {heads = 4 : i64, causal} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
  %op = graph.add %o, %p : tensor<2x16x32xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x32xbf16>
  %l0 = graph.reduce_sum %op : tensor<2x16x32xbf16> -> tensor<bf16>
  %l1 = graph.reduce_sum %d : tensor<2x16x96xbf16> -> tensor<bf16>
  %l = graph.add %l0, %l1 : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// graph-fuse-packed-attention: attention whose q, k, v are the thirds of
// one [B, T, 3E] projection (sliced, split into heads, transposed) and
// whose result goes back to [B, T, E] becomes one graph.packed_attention.
// RUN: ampc-opt %s --split-input-file --graph-fuse-packed-attention | FileCheck %s

// A GPT block's attention (bf16, as after graph-autocast): the chain goes,
// the precision notes stay, and the projection reads the packed result.
// CHECK-LABEL: graph.model @gpt_block
// CHECK: %[[QKV:.*]] = graph.linear
// CHECK-NOT: graph.slice
// CHECK-NOT: graph.transpose
// CHECK: %[[O:.*]] = graph.packed_attention %[[QKV]] {amp.precision = "bf16", amp.rule = "attention", causal, heads = 4 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
// CHECK-NOT: graph.scaled_dot_product_attention
// CHECK: graph.linear %[[O]]
graph.model @gpt_block {
  %x = graph.input "x" : tensor<2x16x32xbf16>
  %w = graph.input "w" : tensor<96x32xbf16>
  %wo = graph.input "wo" : tensor<32x32xbf16>
  %qkv = graph.linear %x, %w : tensor<2x16x32xbf16>, tensor<96x32xbf16> -> tensor<2x16x96xbf16>
  %q0 = graph.slice %qkv {limits = array<i64: 2, 16, 32>, starts = array<i64: 0, 0, 0>} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %q1 = graph.reshape %q0 : tensor<2x16x32xbf16> -> tensor<2x16x4x8xbf16>
  %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x8xbf16> -> tensor<2x4x16x8xbf16>
  %k0 = graph.slice %qkv {limits = array<i64: 2, 16, 64>, starts = array<i64: 0, 0, 32>} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %k1 = graph.reshape %k0 : tensor<2x16x32xbf16> -> tensor<2x16x4x8xbf16>
  %k = graph.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x8xbf16> -> tensor<2x4x16x8xbf16>
  %v0 = graph.slice %qkv {limits = array<i64: 2, 16, 96>, starts = array<i64: 0, 0, 64>} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  %v1 = graph.reshape %v0 : tensor<2x16x32xbf16> -> tensor<2x16x4x8xbf16>
  %v = graph.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x8xbf16> -> tensor<2x4x16x8xbf16>
  %a = graph.scaled_dot_product_attention %q, %k, %v {amp.precision = "bf16", amp.rule = "attention", causal} : tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16> -> tensor<2x4x16x8xbf16>
  %a1 = graph.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x8xbf16> -> tensor<2x16x4x8xbf16>
  %o = graph.reshape %a1 : tensor<2x16x4x8xbf16> -> tensor<2x16x32xbf16>
  %y = graph.linear %o, %wo : tensor<2x16x32xbf16>, tensor<32x32xbf16> -> tensor<2x16x32xbf16>
  %l = graph.reduce_sum %y : tensor<2x16x32xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// Not causal, an explicit scale, f16: fused, the scale kept.
// CHECK-LABEL: graph.model @scaled
// CHECK: graph.packed_attention %{{.*}} {heads = 2 : i64, scale = 5.000000e-01 : f64} : tensor<1x4x48xf16> -> tensor<1x4x16xf16>
graph.model @scaled {
  %qkv = graph.input "qkv" : tensor<1x4x48xf16>
  %q0 = graph.slice %qkv {limits = array<i64: 1, 4, 16>, starts = array<i64: 0, 0, 0>} : tensor<1x4x48xf16> -> tensor<1x4x16xf16>
  %q1 = graph.reshape %q0 : tensor<1x4x16xf16> -> tensor<1x4x2x8xf16>
  %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xf16> -> tensor<1x2x4x8xf16>
  %k0 = graph.slice %qkv {limits = array<i64: 1, 4, 32>, starts = array<i64: 0, 0, 16>} : tensor<1x4x48xf16> -> tensor<1x4x16xf16>
  %k1 = graph.reshape %k0 : tensor<1x4x16xf16> -> tensor<1x4x2x8xf16>
  %k = graph.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xf16> -> tensor<1x2x4x8xf16>
  %v0 = graph.slice %qkv {limits = array<i64: 1, 4, 48>, starts = array<i64: 0, 0, 32>} : tensor<1x4x48xf16> -> tensor<1x4x16xf16>
  %v1 = graph.reshape %v0 : tensor<1x4x16xf16> -> tensor<1x4x2x8xf16>
  %v = graph.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xf16> -> tensor<1x2x4x8xf16>
  %a = graph.scaled_dot_product_attention %q, %k, %v {scale = 0.5} : tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf16>
  %a1 = graph.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x8xf16> -> tensor<1x4x2x8xf16>
  %o = graph.reshape %a1 : tensor<1x4x2x8xf16> -> tensor<1x4x16xf16>
  %l = graph.reduce_sum %o : tensor<1x4x16xf16> -> tensor<f16>
  graph.output loss = %l : tensor<f16>
}

// -----

// q and k swapped (k's slice first): the thirds are not in q, k, v order.
// CHECK-LABEL: graph.model @not_in_order
// CHECK-NOT: graph.packed_attention
// CHECK: graph.scaled_dot_product_attention
graph.model @not_in_order {
  %qkv = graph.input "qkv" : tensor<1x4x48xbf16>
  %q0 = graph.slice %qkv {limits = array<i64: 1, 4, 32>, starts = array<i64: 0, 0, 16>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %q1 = graph.reshape %q0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %k0 = graph.slice %qkv {limits = array<i64: 1, 4, 16>, starts = array<i64: 0, 0, 0>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %k1 = graph.reshape %k0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %k = graph.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %v0 = graph.slice %qkv {limits = array<i64: 1, 4, 48>, starts = array<i64: 0, 0, 32>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %v1 = graph.reshape %v0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %v = graph.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %a = graph.scaled_dot_product_attention %q, %k, %v : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %a1 = graph.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x8xbf16> -> tensor<1x4x2x8xbf16>
  %o = graph.reshape %a1 : tensor<1x4x2x8xbf16> -> tensor<1x4x16xbf16>
  %l = graph.reduce_sum %o : tensor<1x4x16xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// The slices do not tile the last axis (its thirds are 32 wide, the
// slices 16): left alone.
// CHECK-LABEL: graph.model @not_tiling
// CHECK-NOT: graph.packed_attention
// CHECK: graph.scaled_dot_product_attention
graph.model @not_tiling {
  %qkv = graph.input "qkv" : tensor<1x4x96xbf16>
  %q0 = graph.slice %qkv {limits = array<i64: 1, 4, 16>, starts = array<i64: 0, 0, 0>} : tensor<1x4x96xbf16> -> tensor<1x4x16xbf16>
  %q1 = graph.reshape %q0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %k0 = graph.slice %qkv {limits = array<i64: 1, 4, 32>, starts = array<i64: 0, 0, 16>} : tensor<1x4x96xbf16> -> tensor<1x4x16xbf16>
  %k1 = graph.reshape %k0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %k = graph.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %v0 = graph.slice %qkv {limits = array<i64: 1, 4, 48>, starts = array<i64: 0, 0, 32>} : tensor<1x4x96xbf16> -> tensor<1x4x16xbf16>
  %v1 = graph.reshape %v0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %v = graph.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %a = graph.scaled_dot_product_attention %q, %k, %v : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %a1 = graph.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x8xbf16> -> tensor<1x4x2x8xbf16>
  %o = graph.reshape %a1 : tensor<1x4x2x8xbf16> -> tensor<1x4x16xbf16>
  %l = graph.reduce_sum %o : tensor<1x4x16xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// k's slice has another user: its copy stays, so nothing is fused.
// CHECK-LABEL: graph.model @slice_shared
// CHECK-NOT: graph.packed_attention
// CHECK: graph.scaled_dot_product_attention
graph.model @slice_shared {
  %qkv = graph.input "qkv" : tensor<1x4x48xbf16>
  %q0 = graph.slice %qkv {limits = array<i64: 1, 4, 16>, starts = array<i64: 0, 0, 0>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %q1 = graph.reshape %q0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %k0 = graph.slice %qkv {limits = array<i64: 1, 4, 32>, starts = array<i64: 0, 0, 16>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %k1 = graph.reshape %k0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %k = graph.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %v0 = graph.slice %qkv {limits = array<i64: 1, 4, 48>, starts = array<i64: 0, 0, 32>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %v1 = graph.reshape %v0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %v = graph.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %a = graph.scaled_dot_product_attention %q, %k, %v : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %a1 = graph.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x8xbf16> -> tensor<1x4x2x8xbf16>
  %o = graph.reshape %a1 : tensor<1x4x2x8xbf16> -> tensor<1x4x16xbf16>
  %ok = graph.add %o, %k0 : tensor<1x4x16xbf16>, tensor<1x4x16xbf16> -> tensor<1x4x16xbf16>
  %l = graph.reduce_sum %ok : tensor<1x4x16xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// A mask (here an integer keep-mask) is not part of the packed op.
// CHECK-LABEL: graph.model @masked
// CHECK-NOT: graph.packed_attention
// CHECK: graph.scaled_dot_product_attention %{{.*}} mask
graph.model @masked {
  %qkv = graph.input "qkv" : tensor<1x4x48xbf16>
  %m = graph.input "m" : tensor<1x1x4x4xi64>
  %q0 = graph.slice %qkv {limits = array<i64: 1, 4, 16>, starts = array<i64: 0, 0, 0>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %q1 = graph.reshape %q0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %k0 = graph.slice %qkv {limits = array<i64: 1, 4, 32>, starts = array<i64: 0, 0, 16>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %k1 = graph.reshape %k0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %k = graph.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %v0 = graph.slice %qkv {limits = array<i64: 1, 4, 48>, starts = array<i64: 0, 0, 32>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %v1 = graph.reshape %v0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %v = graph.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %a = graph.scaled_dot_product_attention %q, %k, %v mask %m : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x1x4x4xi64> -> tensor<1x2x4x8xbf16>
  %a1 = graph.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x8xbf16> -> tensor<1x4x2x8xbf16>
  %o = graph.reshape %a1 : tensor<1x4x2x8xbf16> -> tensor<1x4x16xbf16>
  %l = graph.reduce_sum %o : tensor<1x4x16xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// The result read as [B, H, T, D] (no transpose back): left alone.
// CHECK-LABEL: graph.model @result_heads
// CHECK-NOT: graph.packed_attention
// CHECK: graph.scaled_dot_product_attention
graph.model @result_heads {
  %qkv = graph.input "qkv" : tensor<1x4x48xbf16>
  %q0 = graph.slice %qkv {limits = array<i64: 1, 4, 16>, starts = array<i64: 0, 0, 0>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %q1 = graph.reshape %q0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %k0 = graph.slice %qkv {limits = array<i64: 1, 4, 32>, starts = array<i64: 0, 0, 16>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %k1 = graph.reshape %k0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %k = graph.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %v0 = graph.slice %qkv {limits = array<i64: 1, 4, 48>, starts = array<i64: 0, 0, 32>} : tensor<1x4x48xbf16> -> tensor<1x4x16xbf16>
  %v1 = graph.reshape %v0 : tensor<1x4x16xbf16> -> tensor<1x4x2x8xbf16>
  %v = graph.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xbf16> -> tensor<1x2x4x8xbf16>
  %a = graph.scaled_dot_product_attention %q, %k, %v : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  %l = graph.reduce_sum %a : tensor<1x2x4x8xbf16> -> tensor<bf16>
  graph.output loss = %l : tensor<bf16>
}

// -----

// f32 (and head dims cuDNN does not take): the packed kernels would copy
// q, k, v out again in the backward, so the unfused graph stays.
// CHECK-LABEL: graph.model @f32_stays
// CHECK-NOT: graph.packed_attention
// CHECK: graph.scaled_dot_product_attention
graph.model @f32_stays {
  %qkv = graph.input "qkv" : tensor<1x4x24xf32>
  %q0 = graph.slice %qkv {limits = array<i64: 1, 4, 8>, starts = array<i64: 0, 0, 0>} : tensor<1x4x24xf32> -> tensor<1x4x8xf32>
  %q1 = graph.reshape %q0 : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x4xf32> -> tensor<1x2x4x4xf32>
  %k0 = graph.slice %qkv {limits = array<i64: 1, 4, 16>, starts = array<i64: 0, 0, 8>} : tensor<1x4x24xf32> -> tensor<1x4x8xf32>
  %k1 = graph.reshape %k0 : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %k = graph.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x4xf32> -> tensor<1x2x4x4xf32>
  %v0 = graph.slice %qkv {limits = array<i64: 1, 4, 24>, starts = array<i64: 0, 0, 16>} : tensor<1x4x24xf32> -> tensor<1x4x8xf32>
  %v1 = graph.reshape %v0 : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %v = graph.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x4xf32> -> tensor<1x2x4x4xf32>
  %a = graph.scaled_dot_product_attention %q, %k, %v {scale = 0.5} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %a1 = graph.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x4xf32> -> tensor<1x4x2x4xf32>
  %o = graph.reshape %a1 : tensor<1x4x2x4xf32> -> tensor<1x4x8xf32>
  %l = graph.reduce_sum %o : tensor<1x4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

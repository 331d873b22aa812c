// graph-desugar: shape sugar to reshape/broadcast_to, broadcasting matmuls
// to a flattened 2-D matmul or broadcast_to + batch_matmul on equal batches;
// core forms stay as they are.
// RUN: ampc-opt %s --split-input-file --graph-desugar | FileCheck %s

// CHECK-LABEL: graph.model @shapes
// CHECK:       %[[X:.*]] = graph.input "x"
// CHECK-NEXT:  %[[S:.*]] = graph.reshape %[[X]] : tensor<4x1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[U:.*]] = graph.reshape %[[S]] : tensor<4x8xf32> -> tensor<1x4x8x1xf32>
// CHECK-NEXT:  %[[E:.*]] = graph.broadcast_to %[[U]] {precision = "fp32"} : tensor<1x4x8x1xf32> -> tensor<3x4x8x5xf32>
// CHECK-NEXT:  graph.reduce_sum %[[E]]
// CHECK-NOT:   graph.squeeze
// CHECK-NOT:   graph.expand
graph.model @shapes {
  %x = graph.input "x" : tensor<4x1x8xf32>
  %s = graph.squeeze %x {axes = array<i64: -2>} : tensor<4x1x8xf32> -> tensor<4x8xf32>
  %u = graph.unsqueeze %s {axes = array<i64: 0, 3>} : tensor<4x8xf32> -> tensor<1x4x8x1xf32>
  %e = graph.expand %u {precision = "fp32"} : tensor<1x4x8x1xf32> -> tensor<3x4x8x5xf32>
  %same = graph.expand %e : tensor<3x4x8x5xf32> -> tensor<3x4x8x5xf32>
  %l = graph.reduce_sum %same : tensor<3x4x8x5xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @matmuls
// CHECK:       %[[A:.*]] = graph.input "a" : tensor<2x3x4x8xf32>
// CHECK:       %[[W:.*]] = graph.param "w"
// CHECK:       %[[B:.*]] = graph.param "b"
// CHECK:       %[[W2:.*]] = graph.param "w2"
// CHECK:       %[[F:.*]] = graph.reshape %[[A]] : tensor<2x3x4x8xf32> -> tensor<24x8xf32>
// CHECK-NEXT:  %[[M:.*]] = graph.matmul %[[F]], %[[W]] : tensor<24x8xf32>, tensor<8x5xf32> -> tensor<24x5xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.reshape %[[M]] : tensor<24x5xf32> -> tensor<2x3x4x5xf32>
// CHECK-NEXT:  %[[BB:.*]] = graph.broadcast_to %[[B]] : tensor<3x5x6xf32> -> tensor<2x3x5x6xf32>
// CHECK-NEXT:  graph.batch_matmul %[[R]], %[[BB]] : tensor<2x3x4x5xf32>, tensor<2x3x5x6xf32> -> tensor<2x3x4x6xf32>
// CHECK:       %[[AA:.*]] = graph.broadcast_to %[[W2]] : tensor<7x4xf32> -> tensor<2x3x7x4xf32>
// CHECK-NEXT:  graph.batch_matmul %[[AA]], %{{.*}} : tensor<2x3x7x4xf32>, tensor<2x3x4x6xf32> -> tensor<2x3x7x6xf32>
// CHECK:       graph.batch_matmul %{{.*}}, %{{.*}} : tensor<2x3x7x6xf32>, tensor<2x3x6x7xf32> -> tensor<2x3x7x7xf32>
// CHECK:       graph.matmul %{{.*}}, %{{.*}} : tensor<8x5xf32>, tensor<5x8xf32> -> tensor<8x8xf32>
graph.model @matmuls {
  %a = graph.input "a" : tensor<2x3x4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x5xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<3x5x6xf32>
  %w2 = graph.param "w2" init(#graph.zeros) : tensor<7x4xf32>
  %m = graph.matmul %a, %w : tensor<2x3x4x8xf32>, tensor<8x5xf32> -> tensor<2x3x4x5xf32>
  %bm = graph.batch_matmul %m, %b : tensor<2x3x4x5xf32>, tensor<3x5x6xf32> -> tensor<2x3x4x6xf32>
  %lm = graph.matmul %w2, %bm : tensor<7x4xf32>, tensor<2x3x4x6xf32> -> tensor<2x3x7x6xf32>
  %t = graph.transpose %lm {perm = array<i64: 0, 1, 3, 2>} : tensor<2x3x7x6xf32> -> tensor<2x3x6x7xf32>
  %sq = graph.batch_matmul %lm, %t : tensor<2x3x7x6xf32>, tensor<2x3x6x7xf32> -> tensor<2x3x7x7xf32>
  %wt = graph.transpose %w {perm = array<i64: 1, 0>} : tensor<8x5xf32> -> tensor<5x8xf32>
  %two = graph.batch_matmul %w, %wt : tensor<8x5xf32>, tensor<5x8xf32> -> tensor<8x8xf32>
  %l1 = graph.reduce_sum %sq : tensor<2x3x7x7xf32> -> tensor<f32>
  %l2 = graph.reduce_sum %two : tensor<8x8xf32> -> tensor<f32>
  %l = graph.add %l1, %l2 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// Attention with dropout_p: PyTorch's math path around a graph.dropout; the
// kv heads serve consecutive query heads through a reshape (GQA). Without
// dropout_p the fused op stays.
// CHECK-LABEL: graph.model @attention_dropout
// CHECK:       %[[Q:.*]] = graph.input "q" : tensor<1x4x3x8xf32>
// CHECK:       %[[K:.*]] = graph.input "k" : tensor<1x2x5x8xf32>
// CHECK:       %[[M:.*]] = graph.input "m" : tensor<3x5xi64>
// CHECK:       %[[QG:.*]] = graph.reshape %[[Q]] : tensor<1x4x3x8xf32> -> tensor<1x2x6x8xf32>
// CHECK-NEXT:  %[[KT:.*]] = graph.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT:  %[[S:.*]] = graph.batch_matmul %[[QG]], %[[KT]] : tensor<1x2x6x8xf32>, tensor<1x2x8x5xf32> -> tensor<1x2x6x5xf32>
// CHECK-NEXT:  %[[S4:.*]] = graph.reshape %[[S]] : tensor<1x2x6x5xf32> -> tensor<1x4x3x5xf32>
// CHECK-NEXT:  %[[SC:.*]] = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:  %[[SS:.*]] = graph.mul %[[S4]], %[[SC]]
// CHECK-NEXT:  %[[TRI:.*]] = graph.constant dense<{{\[\[}}0.000000e+00, 0xFF800000
// CHECK-NEXT:  %[[SCA:.*]] = graph.add %[[SS]], %[[TRI]]
// CHECK-NEXT:  %[[NINF:.*]] = graph.constant dense<0xFF800000> : tensor<f32>
// CHECK-NEXT:  %[[W:.*]] = graph.where %[[M]], %[[SCA]], %[[NINF]]
// CHECK-NEXT:  %[[P:.*]] = graph.softmax %[[W]] {axis = -1 : i64}
// CHECK-NEXT:  %[[D:.*]] = graph.dropout %[[P]] {p = 1.000000e-01 : f64} : tensor<1x4x3x5xf32>
// CHECK-NEXT:  %[[DG:.*]] = graph.reshape %[[D]] : tensor<1x4x3x5xf32> -> tensor<1x2x6x5xf32>
// CHECK-NEXT:  %[[O:.*]] = graph.batch_matmul %[[DG]], %{{.*}} : tensor<1x2x6x5xf32>, tensor<1x2x5x2xf32> -> tensor<1x2x6x2xf32>
// CHECK-NEXT:  graph.reshape %[[O]] : tensor<1x2x6x2xf32> -> tensor<1x4x3x2xf32>
// CHECK:       graph.scaled_dot_product_attention %[[Q]], %[[K]], %{{.*}} mask %[[M]] {causal}
graph.model @attention_dropout {
  %q = graph.input "q" : tensor<1x4x3x8xf32>
  %k = graph.input "k" : tensor<1x2x5x8xf32>
  %v = graph.input "v" : tensor<1x2x5x2xf32>
  %m = graph.input "m" : tensor<3x5xi64>
  %o = graph.scaled_dot_product_attention %q, %k, %v mask %m {causal, dropout_p = 0.1, scale = 0.5} : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x2xf32>, tensor<3x5xi64> -> tensor<1x4x3x2xf32>
  %e = graph.scaled_dot_product_attention %q, %k, %v mask %m {causal} : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x2xf32>, tensor<3x5xi64> -> tensor<1x4x3x2xf32>
  %s = graph.add %o, %e : tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32> -> tensor<1x4x3x2xf32>
  %l = graph.reduce_sum %s : tensor<1x4x3x2xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

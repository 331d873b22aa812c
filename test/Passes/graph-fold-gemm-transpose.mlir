// graph-fold-gemm-transpose: a transpose of the last two axes feeding a
// matmul/batch_matmul becomes the GEMM's transpose flag; the transpose goes
// when nothing else reads it; other permutations stay.
// RUN: ampc-opt %s --split-input-file --graph-fold-gemm-transpose | FileCheck %s

// CHECK-LABEL: graph.model @fold
// CHECK:       %[[A:.*]] = graph.input "a" : tensor<8x4xf32>
// CHECK:       %[[B:.*]] = graph.input "b" : tensor<16x8xf32>
// CHECK-NOT:   graph.transpose
// CHECK:       %[[C:.*]] = graph.matmul %[[A]], %[[B]] {lhs_transposed, rhs_transposed} : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NOT:   graph.transpose
graph.model @fold {
  %a = graph.input "a" : tensor<8x4xf32>
  %b = graph.input "b" : tensor<16x8xf32>
  %at = graph.transpose %a {perm = array<i64: 1, 0>} : tensor<8x4xf32> -> tensor<4x8xf32>
  %bt = graph.transpose %b {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
  %c = graph.matmul %at, %bt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %l = graph.reduce_sum %c : tensor<4x16xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// batch_matmul: only the last two axes of a rank-4 operand may swap. The
// transpose of k is folded (rhs_transposed); the head transpose of q
// (perm 0, 2, 1, 3) is not a GEMM transpose and stays.
// CHECK-LABEL: graph.model @batched
// CHECK:       %[[Q:.*]] = graph.input "q" : tensor<2x4x3x8xf32>
// CHECK:       %[[K:.*]] = graph.input "k" : tensor<2x3x5x8xf32>
// CHECK:       %[[QT:.*]] = graph.transpose %[[Q]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
// CHECK-NEXT:  graph.batch_matmul %[[QT]], %[[K]] {rhs_transposed} : tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32> -> tensor<2x3x4x5xf32>
graph.model @batched {
  %q = graph.input "q" : tensor<2x4x3x8xf32>
  %k = graph.input "k" : tensor<2x3x5x8xf32>
  %qt = graph.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x3x5x8xf32> -> tensor<2x3x8x5xf32>
  %s = graph.batch_matmul %qt, %kt : tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32> -> tensor<2x3x4x5xf32>
  %l = graph.reduce_sum %s : tensor<2x3x4x5xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// A transpose with another user stays for it; the GEMM still reads the
// untransposed value. A transpose of an operand already flagged clears the
// flag.
// CHECK-LABEL: graph.model @shared
// CHECK:       %[[A:.*]] = graph.input "a" : tensor<8x4xf32>
// CHECK:       %[[W:.*]] = graph.input "w" : tensor<8x4xf32>
// CHECK:       %[[AT:.*]] = graph.transpose %[[A]] {perm = array<i64: 1, 0>} : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[C:.*]] = graph.matmul %[[A]], %[[W]] {lhs_transposed} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  %[[D:.*]] = graph.matmul %[[C]], %[[C]] : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  graph.reduce_sum %[[AT]]
graph.model @shared {
  %a = graph.input "a" : tensor<8x4xf32>
  %w = graph.input "w" : tensor<8x4xf32>
  %at = graph.transpose %a {perm = array<i64: 1, 0>} : tensor<8x4xf32> -> tensor<4x8xf32>
  %c = graph.matmul %at, %w : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  %ct = graph.transpose %c {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
  %d = graph.matmul %ct, %c {lhs_transposed} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %s = graph.reduce_sum %at : tensor<4x8xf32> -> tensor<f32>
  %t = graph.reduce_sum %d : tensor<4x4xf32> -> tensor<f32>
  %l = graph.add %s, %t : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

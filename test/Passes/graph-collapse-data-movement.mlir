// graph-collapse-data-movement: attention's head split (slice -> reshape ->
// transpose) and its backward (transpose -> reshape -> slice_backward) as
// one graph.slice / slice_backward with perm over a reshape (an alias) of
// the source; chains that are not one strided view stay.
// RUN: ampc-opt %s --split-input-file --graph-collapse-data-movement | FileCheck %s

// [B=2, T=3, 3C=12] -> k = columns 4..8 -> [2, 3, H=2, D=2] -> [2, 2, 3, 2].
// CHECK-LABEL: func.func @heads
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3x12xf32>, %[[G:.*]]: tensor<2x2x3x2xf32>)
// CHECK:       %[[XR:.*]] = graph.reshape %[[X]] : tensor<2x3x12xf32> -> tensor<2x3x6x2xf32>
// CHECK-NEXT:  %[[K:.*]] = graph.slice %[[XR]] {limits = array<i64: 2, 3, 4, 2>, perm = array<i64: 0, 2, 1, 3>, starts = array<i64: 0, 0, 2, 0>} : tensor<2x3x6x2xf32> -> tensor<2x2x3x2xf32>
// CHECK-NEXT:  %[[DX:.*]] = graph.slice_backward %[[G]] {limits = array<i64: 2, 3, 4, 2>, perm = array<i64: 0, 2, 1, 3>, starts = array<i64: 0, 0, 2, 0>} : tensor<2x2x3x2xf32> -> tensor<2x3x6x2xf32>
// CHECK-NEXT:  %[[D:.*]] = graph.reshape %[[DX]] : tensor<2x3x6x2xf32> -> tensor<2x3x12xf32>
// CHECK-NEXT:  return %[[K]], %[[D]]
func.func @heads(%x: tensor<2x3x12xf32>, %g: tensor<2x2x3x2xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x3x12xf32>) {
  %s = graph.slice %x {starts = array<i64: 0, 0, 4>, limits = array<i64: 2, 3, 8>} : tensor<2x3x12xf32> -> tensor<2x3x4xf32>
  %r = graph.reshape %s : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
  %k = graph.transpose %r {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x2xf32> -> tensor<2x2x3x2xf32>
  %gt = graph.transpose %g {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x2xf32> -> tensor<2x3x2x2xf32>
  %gr = graph.reshape %gt : tensor<2x3x2x2xf32> -> tensor<2x3x4xf32>
  %dx = graph.slice_backward %gr {starts = array<i64: 0, 0, 4>, limits = array<i64: 2, 3, 8>} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  return %k, %dx : tensor<2x2x3x2xf32>, tensor<2x3x12xf32>
}

// -----

// Not one view: the slice starts off the split (column 3 of pairs), and a
// reshape that merges dimensions. Both chains stay as written.
// CHECK-LABEL: func.func @not_a_view
// CHECK:       graph.slice %{{.*}} {limits = array<i64: 2, 3, 7>, starts = array<i64: 0, 0, 3>} : tensor<2x3x12xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:  graph.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
// CHECK-NEXT:  graph.transpose
// CHECK-NEXT:  graph.slice %{{.*}} {limits = array<i64: 2, 3, 8>, starts = array<i64: 0, 0, 4>} : tensor<2x3x12xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:  graph.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:  return
func.func @not_a_view(%x: tensor<2x3x12xf32>) -> (tensor<2x2x3x2xf32>, tensor<6x4xf32>) {
  %s = graph.slice %x {starts = array<i64: 0, 0, 3>, limits = array<i64: 2, 3, 7>} : tensor<2x3x12xf32> -> tensor<2x3x4xf32>
  %r = graph.reshape %s : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
  %k = graph.transpose %r {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x2xf32> -> tensor<2x2x3x2xf32>
  %s2 = graph.slice %x {starts = array<i64: 0, 0, 4>, limits = array<i64: 2, 3, 8>} : tensor<2x3x12xf32> -> tensor<2x3x4xf32>
  %m = graph.reshape %s2 : tensor<2x3x4xf32> -> tensor<6x4xf32>
  return %k, %m : tensor<2x2x3x2xf32>, tensor<6x4xf32>
}

// -----

// A slice with another user stays for it; the transposed read becomes its
// own slice with perm (still one copy each).
// CHECK-LABEL: func.func @shared
// CHECK:       %[[S:.*]] = graph.slice %[[X:.*]] {limits = array<i64: 4, 6>, starts = array<i64: 0, 2>} : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  %[[T:.*]] = graph.slice %[[X]] {limits = array<i64: 4, 6>, perm = array<i64: 1, 0>, starts = array<i64: 0, 2>} : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  return %[[S]], %[[T]]
func.func @shared(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %s = graph.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 6>} : tensor<4x8xf32> -> tensor<4x4xf32>
  %t = graph.transpose %s {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
  return %s, %t : tensor<4x4xf32>, tensor<4x4xf32>
}

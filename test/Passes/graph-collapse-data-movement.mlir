// graph-collapse-data-movement: attention's head split (slice -> reshape ->
// transpose) and its backward (transpose -> reshape -> slice_backward) as
// one graph.slice / slice_backward with perm over a reshape (an alias) of
// the source; chains that are not one strided view stay. Then a sum of
// slice_backward results that tile the result along one axis (the q/k/v
// cotangents) becomes one graph.concat with perm; other sums stay.
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

// -----

// Attention's backward: the q, k and v cotangents [B=2, H=2, T=3, D=2]
// each go back through transpose -> reshape -> slice_backward into the
// fused [2, 3, 12] gradient, and autodiff sums the three (here in another
// order). The chains become slice_backward with perm, then the sum one
// concat with that perm (its own inverse) ordered q, k, v: no zero-filled
// tensor and no add remain.
// CHECK-LABEL: func.func @qkv_sum
// CHECK-SAME:  (%[[Q:.*]]: tensor<2x2x3x2xf32>, %[[K:.*]]: tensor<2x2x3x2xf32>, %[[V:.*]]: tensor<2x2x3x2xf32>)
// CHECK-NEXT:  %[[C:.*]] = graph.concat %[[Q]], %[[K]], %[[V]] {axis = 2 : i64, perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32> -> tensor<2x3x6x2xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.reshape %[[C]] : tensor<2x3x6x2xf32> -> tensor<2x3x12xf32>
// CHECK-NEXT:  return %[[R]]
func.func @qkv_sum(%q: tensor<2x2x3x2xf32>, %k: tensor<2x2x3x2xf32>, %v: tensor<2x2x3x2xf32>) -> tensor<2x3x12xf32> {
  %qt = graph.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x2xf32> -> tensor<2x3x2x2xf32>
  %qr = graph.reshape %qt : tensor<2x3x2x2xf32> -> tensor<2x3x4xf32>
  %dq = graph.slice_backward %qr {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 3, 4>} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %kt = graph.transpose %k {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x2xf32> -> tensor<2x3x2x2xf32>
  %kr = graph.reshape %kt : tensor<2x3x2x2xf32> -> tensor<2x3x4xf32>
  %dk = graph.slice_backward %kr {starts = array<i64: 0, 0, 4>, limits = array<i64: 2, 3, 8>} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %vt = graph.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x2xf32> -> tensor<2x3x2x2xf32>
  %vr = graph.reshape %vt : tensor<2x3x2x2xf32> -> tensor<2x3x4xf32>
  %dv = graph.slice_backward %vr {starts = array<i64: 0, 0, 8>, limits = array<i64: 2, 3, 12>} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %s0 = graph.add %dv, %dk : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  %s = graph.add %dq, %s0 : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  return %s : tensor<2x3x12xf32>
}

// -----

// Terms that are slice_backward results themselves, with a perm that is
// not its own inverse: g's dimension i is slice dimension (1, 2, 0)[i], so
// the concat transposes each g by (2, 0, 1). Rows 1..3 come first.
// CHECK-LABEL: func.func @inverse_perm
// CHECK-SAME:  (%[[A:.*]]: tensor<1x4x2xf32>, %[[B:.*]]: tensor<2x4x2xf32>)
// CHECK-NEXT:  %[[C:.*]] = graph.concat %[[B]], %[[A]] {axis = 1 : i64, perm = array<i64: 2, 0, 1>} : tensor<2x4x2xf32>, tensor<1x4x2xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:  return %[[C]]
func.func @inverse_perm(%a: tensor<1x4x2xf32>, %b: tensor<2x4x2xf32>) -> tensor<2x3x4xf32> {
  %da = graph.slice_backward %a {starts = array<i64: 0, 2, 0>, limits = array<i64: 2, 3, 4>, perm = array<i64: 1, 2, 0>} : tensor<1x4x2xf32> -> tensor<2x3x4xf32>
  %db = graph.slice_backward %b {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 2, 4>, perm = array<i64: 1, 2, 0>} : tensor<2x4x2xf32> -> tensor<2x3x4xf32>
  %s = graph.add %da, %db : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %s : tensor<2x3x4xf32>
}

// -----

// The slices tile the inner sum; the outer add of another value stays.
// CHECK-LABEL: func.func @inner_sum
// CHECK-SAME:  (%[[A:.*]]: tensor<4x2xf32>, %[[B:.*]]: tensor<4x4xf32>, %[[X:.*]]: tensor<4x6xf32>)
// CHECK-NEXT:  %[[C:.*]] = graph.concat %[[A]], %[[B]] {axis = 1 : i64} : tensor<4x2xf32>, tensor<4x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT:  %[[S:.*]] = graph.add %[[C]], %[[X]]
// CHECK-NEXT:  return %[[S]]
func.func @inner_sum(%a: tensor<4x2xf32>, %b: tensor<4x4xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %da = graph.slice_backward %a {starts = array<i64: 0, 0>, limits = array<i64: 4, 2>} : tensor<4x2xf32> -> tensor<4x6xf32>
  %db = graph.slice_backward %b {starts = array<i64: 0, 2>, limits = array<i64: 4, 6>} : tensor<4x4xf32> -> tensor<4x6xf32>
  %s0 = graph.add %da, %db : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %s = graph.add %s0, %x : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  return %s : tensor<4x6xf32>
}

// -----

// Not rewritten: overlapping slices (columns 0..3 and 2..6), a gap (column
// 3 covered by neither), a slice_backward with another user, slices along
// two axes, a strided slice, and different perms. Every add stays.
// CHECK-LABEL: func.func @not_a_tiling
// CHECK-NOT:   graph.concat
// CHECK-COUNT-6: graph.add
// CHECK-NOT:   graph.concat
// CHECK:       return
func.func @not_a_tiling(%a: tensor<4x3xf32>, %b: tensor<4x4xf32>, %c: tensor<4x2xf32>, %d: tensor<2x6xf32>, %e: tensor<4x6xf32>, %f: tensor<4x4xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %overlap0 = graph.slice_backward %a {starts = array<i64: 0, 0>, limits = array<i64: 4, 3>} : tensor<4x3xf32> -> tensor<4x6xf32>
  %overlap1 = graph.slice_backward %b {starts = array<i64: 0, 2>, limits = array<i64: 4, 6>} : tensor<4x4xf32> -> tensor<4x6xf32>
  %s1 = graph.add %overlap0, %overlap1 : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %gap0 = graph.slice_backward %c {starts = array<i64: 0, 0>, limits = array<i64: 4, 2>} : tensor<4x2xf32> -> tensor<4x6xf32>
  %gap1 = graph.slice_backward %c {starts = array<i64: 0, 4>, limits = array<i64: 4, 6>} : tensor<4x2xf32> -> tensor<4x6xf32>
  %s2 = graph.add %gap0, %gap1 : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %shared0 = graph.slice_backward %a {starts = array<i64: 0, 0>, limits = array<i64: 4, 3>} : tensor<4x3xf32> -> tensor<4x6xf32>
  %shared1 = graph.slice_backward %a {starts = array<i64: 0, 3>, limits = array<i64: 4, 6>} : tensor<4x3xf32> -> tensor<4x6xf32>
  %s3 = graph.add %shared0, %shared1 : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %rows = graph.slice_backward %d {starts = array<i64: 0, 0>, limits = array<i64: 2, 6>} : tensor<2x6xf32> -> tensor<4x6xf32>
  %cols = graph.slice_backward %c {starts = array<i64: 0, 4>, limits = array<i64: 4, 6>} : tensor<4x2xf32> -> tensor<4x6xf32>
  %s4 = graph.add %rows, %cols : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %even = graph.slice_backward %a {starts = array<i64: 0, 0>, limits = array<i64: 4, 6>, strides = array<i64: 1, 2>} : tensor<4x3xf32> -> tensor<4x6xf32>
  %odd = graph.slice_backward %a {starts = array<i64: 0, 1>, limits = array<i64: 4, 6>, strides = array<i64: 1, 2>} : tensor<4x3xf32> -> tensor<4x6xf32>
  %s5 = graph.add %even, %odd : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %p0 = graph.slice_backward %f {starts = array<i64: 0, 0>, limits = array<i64: 4, 4>, perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x6xf32>
  %p1 = graph.slice_backward %c {starts = array<i64: 0, 4>, limits = array<i64: 4, 6>} : tensor<4x2xf32> -> tensor<4x6xf32>
  %s6 = graph.add %p0, %p1 : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  return %s1, %s2, %s3, %s4, %s5, %s6, %shared0 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}

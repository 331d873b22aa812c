// RUN: ampc-opt %s --split-input-file --kernel-plan-memory | FileCheck %s

// Buffers are reused once their last use is behind: %c cannot overlap its
// operands, %d takes the space %a and %b leave; the reshape aliases %c.
// CHECK-LABEL: func.func @reuse(
// CHECK-SAME: attributes {kernel.arena_size = 768 : i64, kernel.arena_size_no_reuse = 1024 : i64}
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 0>}
// CHECK: graph.neg %{{.*}} {kernel.offsets = array<i64: 256>}
// CHECK: graph.add %{{.*}} {kernel.offsets = array<i64: 512>}
// CHECK: graph.reshape %{{.*}} {kernel.offsets = array<i64: -1>}
// CHECK: graph.tanh %{{.*}} {kernel.offsets = array<i64: 0>}
func.func @reuse(%x: tensor<64xf32>) -> (tensor<8x8xf32>, tensor<64xf32>) {
  %a = graph.exp %x : tensor<64xf32>
  %b = graph.neg %a : tensor<64xf32>
  %c = graph.add %a, %b : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %r = graph.reshape %c : tensor<64xf32> -> tensor<8x8xf32>
  %d = graph.tanh %x : tensor<64xf32>
  return %r, %d : tensor<8x8xf32>, tensor<64xf32>
}

// -----

// A tensor whose alias is used late stays live: %e cannot reuse %a's space.
// Small tensors round up to 64 bytes; f16 takes 2 bytes an element.
// CHECK-LABEL: func.func @alias_keeps_alive(
// CHECK-SAME: kernel.arena_size = 192 : i64, kernel.arena_size_no_reuse = 192 : i64
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 0>}
// CHECK: graph.reshape %{{.*}} {kernel.offsets = array<i64: -1>}
// CHECK: graph.cast %{{.*}} {kernel.offsets = array<i64: 64>}
// CHECK: graph.neg %{{.*}} {kernel.offsets = array<i64: 128>}
func.func @alias_keeps_alive(%x: tensor<4xf32>) -> (tensor<2x2xf32>, tensor<4xf16>) {
  %a = graph.exp %x : tensor<4xf32>
  %r = graph.reshape %a : tensor<4xf32> -> tensor<2x2xf32>
  %h = graph.cast %x : tensor<4xf32> -> tensor<4xf16>
  %e = graph.neg %h : tensor<4xf16>
  return %r, %e : tensor<2x2xf32>, tensor<4xf16>
}

// -----

// cross_entropy_with_grad writes dlogits over the logits when nothing reads
// the logits after it (same size); the loss gets space of its own.
// CHECK-LABEL: func.func @ce_in_place(
// CHECK-SAME: kernel.arena_size = 320 : i64, kernel.arena_size_no_reuse = 576 : i64
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 0>}
// CHECK: graph.cross_entropy_with_grad %{{.*}} {kernel.offsets = array<i64: 256, 0>}
func.func @ce_in_place(%x: tensor<4x16xf32>, %y: tensor<4xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x16xf32>) {
  %z = graph.exp %x : tensor<4x16xf32>
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<4x16xf32>, tensor<4xi64>, tensor<f32> -> tensor<f32>, tensor<4x16xf32>
  return %l, %dz : tensor<f32>, tensor<4x16xf32>
}

// -----

// Logits read later (here through a reshape: the model's logits output),
// or of another size than dlogits: dlogits gets a buffer of its own.
// CHECK-LABEL: func.func @ce_not_in_place(
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 0>}
// CHECK: graph.cross_entropy_with_grad %{{.*}} {kernel.offsets = array<i64: 256, 320>}
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 576>}
// CHECK: graph.cross_entropy_with_grad %{{.*}} {kernel.offsets = array<i64: 832, 896>}
func.func @ce_not_in_place(%x: tensor<4x16xf32>, %y: tensor<4xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x16xf32>, tensor<64xf32>, tensor<f32>, tensor<4x16xbf16>) {
  %z = graph.exp %x : tensor<4x16xf32>
  %r = graph.reshape %z : tensor<4x16xf32> -> tensor<64xf32>
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<4x16xf32>, tensor<4xi64>, tensor<f32> -> tensor<f32>, tensor<4x16xf32>
  %z2 = graph.exp %x : tensor<4x16xf32>
  %l2, %dz2 = graph.cross_entropy_with_grad %z2, %y, %g : tensor<4x16xf32>, tensor<4xi64>, tensor<f32> -> tensor<f32>, tensor<4x16xbf16>
  return %l, %dz, %r, %l2, %dz2 : tensor<f32>, tensor<4x16xf32>, tensor<64xf32>, tensor<f32>, tensor<4x16xbf16>
}

// -----

// The model's own block is the evaluation forward, where dropout is off and
// its result is its operand (the emitters print no copy): the buffer of
// %a lives until %b has read it through the dropout, so %b cannot take its
// place. In a function (the training step) dropout writes a buffer.
// CHECK-LABEL: graph.model @eval_dropout
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 0>}
// CHECK: graph.dropout %{{.*}} {kernel.offsets = array<i64: -1>, key = 1 : i64, p = 5.000000e-01 : f64}
// CHECK: graph.neg %{{.*}} {kernel.offsets = array<i64: 256>}
graph.model @eval_dropout {
  %x = graph.input "x" : tensor<64xf32>
  %a = graph.exp %x : tensor<64xf32>
  %d = graph.dropout %a {p = 0.5, key = 1} : tensor<64xf32>
  %b = graph.neg %d : tensor<64xf32>
  %l = graph.reduce_sum %b : tensor<64xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @train_dropout(
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 0>}
// CHECK: graph.dropout %{{.*}} {kernel.offsets = array<i64: 256>, key = 1 : i64, p = 5.000000e-01 : f64}
// CHECK: graph.neg %{{.*}} {kernel.offsets = array<i64: 0>}
func.func @train_dropout(%x: tensor<64xf32>) -> tensor<64xf32> {
  %a = graph.exp %x : tensor<64xf32>
  %d = graph.dropout %a {p = 0.5, key = 1} : tensor<64xf32>
  %b = graph.neg %d : tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

// A slice of the first rows, every later dimension whole, is its operand's
// first bytes: an alias like a reshape (no buffer), and %a's buffer lives
// until %n has read it through the slice, so %n cannot take its place. A
// slice starting at row 1, or one that cuts the last dimension, is a copy.
// CHECK-LABEL: func.func @leading_slice(
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 0>}
// CHECK: graph.slice %{{.*}} {kernel.offsets = array<i64: -1>, limits = array<i64: 3, 16>, starts = array<i64: 0, 0>}
// CHECK: graph.slice %{{.*}} {kernel.offsets = array<i64: 256>, limits = array<i64: 4, 16>, starts = array<i64: 1, 0>}
// CHECK: graph.slice %{{.*}} {kernel.offsets = array<i64: 448>, limits = array<i64: 4, 8>, starts = array<i64: 0, 0>}
// CHECK: graph.neg %{{.*}} {kernel.offsets = array<i64: 576>}
func.func @leading_slice(%x: tensor<4x16xf32>) -> (tensor<3x16xf32>, tensor<3x16xf32>, tensor<4x8xf32>) {
  %a = graph.exp %x : tensor<4x16xf32>
  %s = graph.slice %a {starts = array<i64: 0, 0>, limits = array<i64: 3, 16>} : tensor<4x16xf32> -> tensor<3x16xf32>
  %t = graph.slice %a {starts = array<i64: 1, 0>, limits = array<i64: 4, 16>} : tensor<4x16xf32> -> tensor<3x16xf32>
  %u = graph.slice %a {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>} : tensor<4x16xf32> -> tensor<4x8xf32>
  %n = graph.neg %s : tensor<3x16xf32>
  return %n, %t, %u : tensor<3x16xf32>, tensor<3x16xf32>, tensor<4x8xf32>
}

// -----

// Logits and dlogits of other element widths but the same rounded size
// (2 x 8 bf16 and f32 are both one 64-byte slot): not in place either,
// since the kernel writes element j over element j only (f32 row 0 would
// land on bf16 row 1 before another block has read it).
// CHECK-LABEL: func.func @ce_other_width(
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 0>}
// CHECK: graph.cross_entropy_with_grad %{{.*}} {kernel.offsets = array<i64: 64, 128>}
func.func @ce_other_width(%x: tensor<2x8xbf16>, %y: tensor<2xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<2x8xf32>) {
  %z = graph.exp %x : tensor<2x8xbf16>
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<2x8xbf16>, tensor<2xi64>, tensor<f32> -> tensor<f32>, tensor<2x8xf32>
  return %l, %dz : tensor<f32>, tensor<2x8xf32>
}

// graph-pad-classes: a bias-free linear feeding cross_entropy_with_grad
// whose class row is not a multiple of 16 bytes gets zero weight rows and a
// 0 / -inf bias; the dX GEMM reads the padded weight, the dW GEMM writes
// the padded rows and a slice keeps the real ones.
// RUN: ampc-opt %s --split-input-file --graph-pad-classes | FileCheck %s

// GPT-2's head in small: 101 bf16 classes -> 104 (16 bytes = 8 elements),
// the dlogits reshaped to rows first, as autodiff leaves them.
// CHECK-LABEL: func.func @head
// CHECK:       %[[WP:.*]] = graph.slice_backward %arg1 {limits = array<i64: 101, 32>, starts = array<i64: 0, 0>} : tensor<101x32xbf16> -> tensor<104x32xbf16>
// CHECK-NEXT:  %[[NINF:.*]] = graph.constant dense<0xFF80> : tensor<3xbf16>
// CHECK-NEXT:  %[[B:.*]] = graph.slice_backward %[[NINF]] {limits = array<i64: 104>, starts = array<i64: 101>} : tensor<3xbf16> -> tensor<104xbf16>
// CHECK-NEXT:  %[[Z:.*]] = graph.linear %arg0, %[[WP]], %[[B]] {amp.precision = "bf16"} : tensor<4x16x32xbf16>, tensor<104x32xbf16>, tensor<104xbf16> -> tensor<4x16x104xbf16>
// CHECK-NEXT:  %[[L:.*]], %[[DZ:.*]] = graph.cross_entropy_with_grad %[[Z]], %arg2, %arg3 : tensor<4x16x104xbf16>, tensor<4x16xi64>, tensor<f32> -> tensor<f32>, tensor<4x16x104xbf16>
// CHECK-NEXT:  %[[DZ2:.*]] = graph.reshape %[[DZ]] : tensor<4x16x104xbf16> -> tensor<64x104xbf16>
// CHECK-NEXT:  %[[X2:.*]] = graph.reshape %arg0
// CHECK-NEXT:  %[[DX:.*]] = graph.matmul %[[DZ2]], %[[WP]] : tensor<64x104xbf16>, tensor<104x32xbf16> -> tensor<64x32xbf16>
// CHECK-NEXT:  %[[DWP:.*]] = graph.matmul %[[DZ2]], %[[X2]] {lhs_transposed} : tensor<64x104xbf16>, tensor<64x32xbf16> -> tensor<104x32xbf16>
// CHECK-NEXT:  %[[DW:.*]] = graph.slice %[[DWP]] {limits = array<i64: 101, 32>, starts = array<i64: 0, 0>} : tensor<104x32xbf16> -> tensor<101x32xbf16>
// CHECK-NEXT:  return %[[L]], %[[DX]], %[[DW]]
func.func @head(%x: tensor<4x16x32xbf16>, %w: tensor<101x32xbf16>,
                %y: tensor<4x16xi64>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<64x32xbf16>, tensor<101x32xbf16>) {
  %z = graph.linear %x, %w {amp.precision = "bf16"} : tensor<4x16x32xbf16>, tensor<101x32xbf16> -> tensor<4x16x101xbf16>
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<4x16x101xbf16>, tensor<4x16xi64>, tensor<f32> -> tensor<f32>, tensor<4x16x101xbf16>
  %dz2 = graph.reshape %dz : tensor<4x16x101xbf16> -> tensor<64x101xbf16>
  %x2 = graph.reshape %x : tensor<4x16x32xbf16> -> tensor<64x32xbf16>
  %dx = graph.matmul %dz2, %w : tensor<64x101xbf16>, tensor<101x32xbf16> -> tensor<64x32xbf16>
  %dw = graph.matmul %dz2, %x2 {lhs_transposed} : tensor<64x101xbf16>, tensor<64x32xbf16> -> tensor<101x32xbf16>
  return %l, %dx, %dw : tensor<f32>, tensor<64x32xbf16>, tensor<101x32xbf16>
}

// -----

// FP32: 16 bytes are 4 elements, 10 classes -> 12; a loss alone (no dX,
// no dW: a frozen head on constants) still pads.
// CHECK-LABEL: func.func @f32
// CHECK:       graph.constant dense<0xFF800000> : tensor<2xf32>
// CHECK:       graph.linear {{.*}} -> tensor<8x12xf32>
// CHECK:       graph.cross_entropy_with_grad {{.*}} -> tensor<f32>, tensor<8x12xf32>
func.func @f32(%x: tensor<8x4xf32>, %w: tensor<10x4xf32>, %y: tensor<8xi64>,
               %g: tensor<f32>) -> tensor<f32> {
  %z = graph.linear %x, %w : tensor<8x4xf32>, tensor<10x4xf32> -> tensor<8x10xf32>
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<8x10xf32>, tensor<8xi64>, tensor<f32> -> tensor<f32>, tensor<8x10xf32>
  return %l : tensor<f32>
}

// -----

// Left alone: a row already 16 bytes (96 bf16 classes), a head with a bias,
// label smoothing (the padding would get its share), logits another op
// reads, dlogits another op reads, and a dX GEMM on another weight.
// CHECK-LABEL: func.func @alone
// CHECK-NOT:   slice_backward
// CHECK-NOT:   tensor<8x104xbf16>
// CHECK:       return
func.func @alone(%x: tensor<8x32xbf16>, %w96: tensor<96x32xbf16>,
                 %w: tensor<101x32xbf16>, %b: tensor<101xbf16>,
                 %w2: tensor<101x32xbf16>, %y: tensor<8xi64>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<8x101xbf16>,
        tensor<f32>, tensor<101xbf16>, tensor<f32>, tensor<8x32xbf16>) {
  %z0 = graph.linear %x, %w96 : tensor<8x32xbf16>, tensor<96x32xbf16> -> tensor<8x96xbf16>
  %l0, %d0 = graph.cross_entropy_with_grad %z0, %y, %g : tensor<8x96xbf16>, tensor<8xi64>, tensor<f32> -> tensor<f32>, tensor<8x96xbf16>
  %z1 = graph.linear %x, %w, %b : tensor<8x32xbf16>, tensor<101x32xbf16>, tensor<101xbf16> -> tensor<8x101xbf16>
  %l1, %d1 = graph.cross_entropy_with_grad %z1, %y, %g : tensor<8x101xbf16>, tensor<8xi64>, tensor<f32> -> tensor<f32>, tensor<8x101xbf16>
  %z2 = graph.linear %x, %w : tensor<8x32xbf16>, tensor<101x32xbf16> -> tensor<8x101xbf16>
  %l2, %d2 = graph.cross_entropy_with_grad %z2, %y, %g {label_smoothing = 0.1 : f64} : tensor<8x101xbf16>, tensor<8xi64>, tensor<f32> -> tensor<f32>, tensor<8x101xbf16>
  %z3 = graph.linear %x, %w : tensor<8x32xbf16>, tensor<101x32xbf16> -> tensor<8x101xbf16>
  %l3, %d3 = graph.cross_entropy_with_grad %z3, %y, %g : tensor<8x101xbf16>, tensor<8xi64>, tensor<f32> -> tensor<f32>, tensor<8x101xbf16>
  %z4 = graph.linear %x, %w : tensor<8x32xbf16>, tensor<101x32xbf16> -> tensor<8x101xbf16>
  %l4, %d4 = graph.cross_entropy_with_grad %z4, %y, %g : tensor<8x101xbf16>, tensor<8xi64>, tensor<f32> -> tensor<f32>, tensor<8x101xbf16>
  %s4 = graph.reduce_sum %d4 {axes = array<i64: 0>} : tensor<8x101xbf16> -> tensor<101xbf16>
  %z5 = graph.linear %x, %w : tensor<8x32xbf16>, tensor<101x32xbf16> -> tensor<8x101xbf16>
  %l5, %d5 = graph.cross_entropy_with_grad %z5, %y, %g : tensor<8x101xbf16>, tensor<8xi64>, tensor<f32> -> tensor<f32>, tensor<8x101xbf16>
  %dx5 = graph.matmul %d5, %w2 : tensor<8x101xbf16>, tensor<101x32xbf16> -> tensor<8x32xbf16>
  return %l0, %l1, %l2, %l3, %z3, %l4, %s4, %l5, %dx5 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<8x101xbf16>, tensor<f32>, tensor<101xbf16>, tensor<f32>, tensor<8x32xbf16>
}

// -----

// Under AMP the weight is the epilogue's half copy (an argument
// {graph.param_copy}): the argument itself becomes the padded weight (the
// runtime keeps zero rows after the copy), with no slice_backward; another
// reader of the copy (here a second dX GEMM) gets its first 101 rows.
// CHECK-LABEL: func.func @copy
// CHECK-SAME:  %arg1: tensor<104x32xbf16> {graph.param_copy = "wte.weight"}
// CHECK-NEXT:  %[[ROWS:.*]] = graph.slice %arg1 {limits = array<i64: 101, 32>, starts = array<i64: 0, 0>} : tensor<104x32xbf16> -> tensor<101x32xbf16>
// CHECK-NOT:   graph.slice_backward %arg1
// CHECK:       graph.linear %arg0, %arg1, %{{.*}} : tensor<8x32xbf16>, tensor<104x32xbf16>, tensor<104xbf16> -> tensor<8x104xbf16>
// CHECK:       graph.matmul %{{.*}}, %arg1 : tensor<8x104xbf16>, tensor<104x32xbf16> -> tensor<8x32xbf16>
// CHECK:       graph.matmul %arg4, %[[ROWS]] : tensor<8x101xbf16>, tensor<101x32xbf16> -> tensor<8x32xbf16>
func.func @copy(%x: tensor<8x32xbf16>,
                %w: tensor<101x32xbf16> {graph.param_copy = "wte.weight"},
                %y: tensor<8xi64>, %g: tensor<f32>, %other: tensor<8x101xbf16>)
    -> (tensor<f32>, tensor<8x32xbf16>, tensor<8x32xbf16>) {
  %z = graph.linear %x, %w : tensor<8x32xbf16>, tensor<101x32xbf16> -> tensor<8x101xbf16>
  %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<8x101xbf16>, tensor<8xi64>, tensor<f32> -> tensor<f32>, tensor<8x101xbf16>
  %dx = graph.matmul %dz, %w : tensor<8x101xbf16>, tensor<101x32xbf16> -> tensor<8x32xbf16>
  %dx2 = graph.matmul %other, %w : tensor<8x101xbf16>, tensor<101x32xbf16> -> tensor<8x32xbf16>
  return %l, %dx, %dx2 : tensor<f32>, tensor<8x32xbf16>, tensor<8x32xbf16>
}

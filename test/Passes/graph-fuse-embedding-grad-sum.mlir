// graph-fuse-embedding-grad-sum: the add of an f32 embedding_backward (used
// only there) and another gradient of the table becomes one
// embedding_backward with that gradient (a cast's half input) as init.
// RUN: ampc-opt %s --split-input-file --graph-fuse-embedding-grad-sum | FileCheck %s

// A tied table under AMP: the LM head's bf16 dW, cast, added to the
// scatter-add; the cast goes with the add.
// CHECK-LABEL: func.func @tied
// CHECK-NEXT:  %[[D:.*]] = graph.embedding_backward %arg0, %arg1, %arg2 : tensor<4x16xi64>, tensor<4x16x32xf32>, tensor<256x32xbf16> -> tensor<256x32xf32>
// CHECK-NEXT:  return %[[D]]
func.func @tied(%ids: tensor<4x16xi64>, %g: tensor<4x16x32xf32>,
                %dw: tensor<256x32xbf16>) -> tensor<256x32xf32> {
  %e = graph.embedding_backward %ids, %g : tensor<4x16xi64>, tensor<4x16x32xf32> -> tensor<256x32xf32>
  %c = graph.cast %dw : tensor<256x32xbf16> -> tensor<256x32xf32>
  %s = graph.add %e, %c : tensor<256x32xf32>, tensor<256x32xf32> -> tensor<256x32xf32>
  return %s : tensor<256x32xf32>
}

// -----

// FP32, the embedding's gradient second: the other operand is init as it
// is; a cast with another user stays.
// CHECK-LABEL: func.func @f32_either_order
// CHECK:       %[[D:.*]] = graph.embedding_backward %arg0, %arg1, %arg2 : tensor<8xi64>, tensor<8x4xf32>, tensor<10x4xf32> -> tensor<10x4xf32>
// CHECK:       %[[C:.*]] = graph.cast %arg3
// CHECK-NEXT:  %[[D2:.*]] = graph.embedding_backward %arg0, %arg1, %arg3 : tensor<8xi64>, tensor<8x4xf32>, tensor<10x4xf16> -> tensor<10x4xf32>
// CHECK-NOT:   graph.add
// CHECK:       return %[[D]], %[[D2]], %[[C]]
func.func @f32_either_order(%ids: tensor<8xi64>, %g: tensor<8x4xf32>,
                            %w: tensor<10x4xf32>, %h: tensor<10x4xf16>)
    -> (tensor<10x4xf32>, tensor<10x4xf32>, tensor<10x4xf32>) {
  %e = graph.embedding_backward %ids, %g : tensor<8xi64>, tensor<8x4xf32> -> tensor<10x4xf32>
  %s = graph.add %w, %e : tensor<10x4xf32>, tensor<10x4xf32> -> tensor<10x4xf32>
  %c = graph.cast %h : tensor<10x4xf16> -> tensor<10x4xf32>
  %e2 = graph.embedding_backward %ids, %g : tensor<8xi64>, tensor<8x4xf32> -> tensor<10x4xf32>
  %s2 = graph.add %c, %e2 : tensor<10x4xf32>, tensor<10x4xf32> -> tensor<10x4xf32>
  return %s, %s2, %c : tensor<10x4xf32>, tensor<10x4xf32>, tensor<10x4xf32>
}

// -----

// Left alone: the scatter-add has another user; a half table (the sum
// would round differently); a broadcast add.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-3: graph.add
func.func @not_fused(%ids: tensor<8xi64>, %g: tensor<8x4xf32>,
                     %w: tensor<10x4xf32>, %gh: tensor<8x4xbf16>,
                     %wh: tensor<10x4xbf16>, %b: tensor<4xf32>)
    -> (tensor<10x4xf32>, tensor<10x4xf32>, tensor<10x4xbf16>, tensor<10x4xf32>) {
  %e = graph.embedding_backward %ids, %g : tensor<8xi64>, tensor<8x4xf32> -> tensor<10x4xf32>
  %s = graph.add %e, %w : tensor<10x4xf32>, tensor<10x4xf32> -> tensor<10x4xf32>
  %eh = graph.embedding_backward %ids, %gh : tensor<8xi64>, tensor<8x4xbf16> -> tensor<10x4xbf16>
  %sh = graph.add %eh, %wh : tensor<10x4xbf16>, tensor<10x4xbf16> -> tensor<10x4xbf16>
  %e3 = graph.embedding_backward %ids, %g : tensor<8xi64>, tensor<8x4xf32> -> tensor<10x4xf32>
  %s3 = graph.add %e3, %b : tensor<10x4xf32>, tensor<4xf32> -> tensor<10x4xf32>
  return %s, %e, %sh, %s3 : tensor<10x4xf32>, tensor<10x4xf32>, tensor<10x4xbf16>, tensor<10x4xf32>
}

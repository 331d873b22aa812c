// A small model whose hand-written @vec_grad (graph-autodiff contract; the
// calculus is not the point) gives the CUDA emitter one fused region per
// choice of how many elements a thread handles: packed f32 and bf16 chains,
// a count that is not a multiple of the pack, broadcast operands.
graph.model @vec {
  %x = graph.input "x" : tensor<4x16xf32>
  %u = graph.input "u" : tensor<4x3xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<4x16xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<16xf32>
  %m = graph.mul %x, %w : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %mb = graph.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %l = graph.reduce_sum %mb {axes = array<i64: 0, 1>} : tensor<4x16xf32> -> tensor<f32>
  %lu = graph.reduce_sum %u {axes = array<i64: 0, 1>} : tensor<4x3xf32> -> tensor<f32>
  %l2 = graph.add %l, %lu : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l2 : tensor<f32>
}

func.func @vec_grad(%x: tensor<4x16xf32> {graph.input = "x"}, %u: tensor<4x3xf32> {graph.input = "u"},
                    %w: tensor<4x16xf32> {graph.param = "w"}, %b: tensor<16xf32> {graph.param = "b"},
                    %s: tensor<f32> {graph.loss_scale})
    -> (tensor<f32> {graph.output = "loss"},
        tensor<4x16xf32> {graph.grad = "w"}, tensor<16xf32> {graph.grad = "b"}) {
  // f32 only, 16 elements: 4 per thread.
  %b2 = graph.mul %b, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %b3 = graph.sqrt %b2 : tensor<16xf32>
  // f32 in, bf16 out, 64 elements: 8 per thread (the f32 as 2 x 16 bytes).
  %m = graph.mul %x, %w : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %mh = graph.cast %m : tensor<4x16xf32> -> tensor<4x16xbf16>
  %t = graph.tanh %mh : tensor<4x16xbf16>
  %tt = graph.transpose %t {perm = array<i64: 1, 0>} : tensor<4x16xbf16> -> tensor<16x4xbf16>
  %tf = graph.cast %tt : tensor<16x4xbf16> -> tensor<16x4xf32>
  %l = graph.reduce_sum %tf {axes = array<i64: 0, 1>} : tensor<16x4xf32> -> tensor<f32>
  // bf16 out, 12 elements: not a multiple of 8, back to 4 scalar accesses.
  %uh = graph.cast %u : tensor<4x3xf32> -> tensor<4x3xbf16>
  %ur = graph.relu %uh : tensor<4x3xbf16>
  %ut = graph.transpose %ur {perm = array<i64: 1, 0>} : tensor<4x3xbf16> -> tensor<3x4xbf16>
  %uf = graph.cast %ut : tensor<3x4xbf16> -> tensor<3x4xf32>
  %ul = graph.reduce_sum %uf {axes = array<i64: 0, 1>} : tensor<3x4xf32> -> tensor<f32>
  %l2 = graph.add %l, %ul : tensor<f32>, tensor<f32> -> tensor<f32>
  // Broadcast operands (the bias, the loss scale): one element per thread.
  %dwx = graph.transpose %tf {perm = array<i64: 1, 0>} : tensor<16x4xf32> -> tensor<4x16xf32>
  %dw = graph.add %dwx, %b3 : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %dws = graph.mul %dw, %s : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %db = graph.reduce_sum %dws {axes = array<i64: 0>} : tensor<4x16xf32> -> tensor<16xf32>
  return %l2, %dws, %db : tensor<f32>, tensor<4x16xf32>, tensor<16xf32>
}

// RUN: ampc-opt --graph-autodiff --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: ampc-opt --graph-autodiff %examples/mlp/mlp.mlir | FileCheck %s --check-prefix=MLP
// RUN: ampc-opt --graph-autodiff %examples/cnn/cnn.mlir | FileCheck %s --check-prefix=CNN

// linear over a 3-D input: the leading axes are flattened, dW = g^T x is one
// matmul, db one reduce_sum over the leading axes; x (data) gets nothing.
// CHECK-LABEL: func.func @lin3d_grad(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32> {graph.input = "x"}
// CHECK-SAME: %[[W:.*]]: tensor<5x4xf32> {graph.param = "w"}
// CHECK-SAME: %[[B:.*]]: tensor<5xf32> {graph.param = "b"}
// CHECK-SAME: %[[S:.*]]: tensor<f32> {graph.loss_scale})
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss"}, tensor<5x4xf32> {graph.grad = "w"}, tensor<5xf32> {graph.grad = "b"})
// CHECK: %[[Y:.*]] = graph.linear %[[X]], %[[W]], %[[B]]
// CHECK: %[[L:.*]] = graph.reduce_sum %[[Y]]
// CHECK: %[[S3:.*]] = graph.reshape %[[S]] : tensor<f32> -> tensor<1x1x1xf32>
// CHECK: %[[G:.*]] = graph.broadcast_to %[[S3]] : tensor<1x1x1xf32> -> tensor<2x3x5xf32>
// CHECK: %[[G2:.*]] = graph.reshape %[[G]] : tensor<2x3x5xf32> -> tensor<6x5xf32>
// CHECK: %[[X2:.*]] = graph.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: %[[GT:.*]] = graph.transpose %[[G2]] {perm = array<i64: 1, 0>} : tensor<6x5xf32> -> tensor<5x6xf32>
// CHECK: %[[DW:.*]] = graph.matmul %[[GT]], %[[X2]] : tensor<5x6xf32>, tensor<6x4xf32> -> tensor<5x4xf32>
// CHECK: %[[DB:.*]] = graph.reduce_sum %[[G]] {axes = array<i64: 0, 1>} : tensor<2x3x5xf32> -> tensor<5xf32>
// CHECK-NOT: graph.matmul
// CHECK: return %[[L]], %[[DW]], %[[DB]]
graph.model @lin3d {
  %x = graph.input "x" : tensor<2x3x4xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<5x4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<5xf32>
  %y = graph.linear %x, %w, %b : tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<2x3x5xf32>
  %l = graph.reduce_sum %y : tensor<2x3x5xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// Broadcasting is undone by reductions: a leading axis is summed away, a
// size-1 axis is summed with keepdim. mean = sum / 32.
// CHECK-LABEL: func.func @bcast_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-SAME: %[[B:[^:]*]]: tensor<8xf32>
// CHECK-SAME: %[[C:[^:]*]]: tensor<4x1xf32>
// CHECK-SAME: %[[S:[^:]*]]: tensor<f32>
// CHECK: %[[Y:.*]] = graph.add %[[X]], %[[B]]
// CHECK: graph.mul %[[Y]], %[[C]]
// CHECK: %[[N:.*]] = graph.constant dense<3.125000e-02> : tensor<f32>
// CHECK: %[[SN:.*]] = graph.mul %[[S]], %[[N]]
// CHECK: %[[R:.*]] = graph.reshape %[[SN]] : tensor<f32> -> tensor<1x1xf32>
// CHECK: %[[G:.*]] = graph.broadcast_to %[[R]] : tensor<1x1xf32> -> tensor<4x8xf32>
// CHECK-DAG: %[[GC:.*]] = graph.mul %[[G]], %[[C]]
// CHECK-DAG: %[[GY:.*]] = graph.mul %[[G]], %[[Y]]
// CHECK-DAG: %[[DC:.*]] = graph.reduce_sum %[[GY]] {axes = array<i64: 1>, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-DAG: %[[DB:.*]] = graph.reduce_sum %[[GC]] {axes = array<i64: 0>} : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: return %{{.*}}, %[[DB]], %[[DC]]
graph.model @bcast {
  %x = graph.input "x" : tensor<4x8xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<8xf32>
  %c = graph.param "c" init(#graph.zeros) : tensor<4x1xf32>
  %y = graph.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %z = graph.mul %y, %c : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %l = graph.reduce_mean %z : tensor<4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// A value used twice: its cotangents are summed before its own VJP.
// CHECK-LABEL: func.func @twice_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32>
// CHECK-SAME: %[[W:[^:]*]]: tensor<2x3xf32>
// CHECK-SAME: %[[S:[^:]*]]: tensor<f32>
// CHECK: %[[H:.*]] = graph.linear %[[X]], %[[W]]
// CHECK: %[[T:.*]] = graph.tanh %[[H]]
// CHECK: %[[P:.*]] = graph.mul %[[H]], %[[T]]
// CHECK: %[[G:.*]] = graph.broadcast_to
// CHECK-DAG: %[[GT:.*]] = graph.mul %[[G]], %[[T]]
// CHECK-DAG: %[[GH:.*]] = graph.mul %[[G]], %[[H]]
// CHECK: %[[TT:.*]] = graph.mul %[[T]], %[[T]]
// CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[D:.*]] = graph.sub %[[ONE]], %[[TT]]
// CHECK: %[[DH2:.*]] = graph.mul %[[GH]], %[[D]]
// CHECK: %[[SUM:.*]] = graph.add %[[GT]], %[[DH2]] : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK: %[[ST:.*]] = graph.transpose %[[SUM]]
// CHECK: %[[DW:.*]] = graph.matmul %[[ST]], %[[X]]
// CHECK: return %{{.*}}, %[[DW]]
graph.model @twice {
  %x = graph.input "x" : tensor<4x3xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<2x3xf32>
  %h = graph.linear %x, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %t = graph.tanh %h : tensor<4x2xf32>
  %p = graph.mul %h, %t : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %l = graph.reduce_sum %p : tensor<4x2xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// The backward of a cast casts back to the source type; an f16 loss gets the
// loss scale cast to f16 as its seed; the gradient is FP32 like the weight.
// CHECK-LABEL: func.func @casts_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf16>
// CHECK-SAME: %[[W:[^:]*]]: tensor<2x3xf32>
// CHECK-SAME: %[[S:[^:]*]]: tensor<f32>
// CHECK-SAME: tensor<2x3xf32> {graph.grad = "w"}
// CHECK: %[[WH:.*]] = graph.cast %[[W]] : tensor<2x3xf32> -> tensor<2x3xf16>
// CHECK: %[[Y:.*]] = graph.matmul
// CHECK: %[[SH:.*]] = graph.cast %[[S]] : tensor<f32> -> tensor<f16>
// CHECK: %[[G:.*]] = graph.broadcast_to
// CHECK: %[[DWT:.*]] = graph.matmul %{{.*}}, %[[G]] : tensor<3x4xf16>, tensor<4x2xf16> -> tensor<3x2xf16>
// CHECK: %[[DWH:.*]] = graph.transpose %[[DWT]] {perm = array<i64: 1, 0>} : tensor<3x2xf16> -> tensor<2x3xf16>
// CHECK: %[[DW:.*]] = graph.cast %[[DWH]] : tensor<2x3xf16> -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]]
graph.model @casts {
  %x = graph.input "x" : tensor<4x3xf16>
  %w = graph.param "w" init(#graph.zeros) : tensor<2x3xf32>
  %wh = graph.cast %w : tensor<2x3xf32> -> tensor<2x3xf16>
  %wt = graph.transpose %wh {perm = array<i64: 1, 0>} : tensor<2x3xf16> -> tensor<3x2xf16>
  %y = graph.matmul %x, %wt : tensor<4x3xf16>, tensor<3x2xf16> -> tensor<4x2xf16>
  %l = graph.reduce_sum %y : tensor<4x2xf16> -> tensor<f16>
  graph.output loss = %l : tensor<f16>
}

// -----

// Dropouts without a key get fresh ones (above the largest given), in the
// model too; the backward is a dropout of the cotangent with the same p and
// key, so it applies the forward's mask.
// CHECK-LABEL: graph.model @drop
// CHECK: graph.dropout %{{.*}} {key = 8 : i64, p = 5.000000e-01 : f64}
// CHECK: graph.dropout %{{.*}} {key = 7 : i64, p = 2.500000e-01 : f64}
// CHECK-LABEL: func.func @drop_grad(
// CHECK: %[[D1:.*]] = graph.dropout %{{.*}} {key = 8 : i64, p = 5.000000e-01 : f64}
// CHECK: %[[D2:.*]] = graph.dropout %[[D1]] {key = 7 : i64, p = 2.500000e-01 : f64}
// CHECK: %[[B2:.*]] = graph.dropout %{{.*}} {key = 7 : i64, p = 2.500000e-01 : f64}
// CHECK: %[[B1:.*]] = graph.dropout %[[B2]] {key = 8 : i64, p = 5.000000e-01 : f64}
// CHECK: return %{{.*}}, %[[B1]]
graph.model @drop {
  %w = graph.param "w" init(#graph.ones) : tensor<16xf32>
  %d1 = graph.dropout %w {p = 0.5} : tensor<16xf32>
  %d2 = graph.dropout %d1 {p = 0.25, key = 7} : tensor<16xf32>
  %l = graph.reduce_sum %d2 : tensor<16xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// Integer ids get no cotangent: the table gets a scatter-add, nothing
// else is built for the ids; a float data input gets nothing either.
// CHECK-LABEL: func.func @ids_grad(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<2x5xi32> {graph.input = "ids"}
// CHECK-SAME: %[[T:[^:]*]]: tensor<7x3xf32> {graph.param = "wte"}
// CHECK: %[[E:.*]] = graph.embedding %[[IDS]], %[[T]]
// CHECK: %[[G:.*]] = graph.broadcast_to
// CHECK-NEXT: %[[DT:.*]] = graph.embedding_backward %[[IDS]], %[[G]] : tensor<2x5xi32>, tensor<2x5x3xf32> -> tensor<7x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DT]]
graph.model @ids {
  %ids = graph.input "ids" : tensor<2x5xi32>
  %t = graph.param "wte" init(#graph.zeros) : tensor<7x3xf32>
  %e = graph.embedding %ids, %t : tensor<2x5xi32>, tensor<7x3xf32> -> tensor<2x5x3xf32>
  %l = graph.reduce_sum %e : tensor<2x5x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// A parameter the loss never reaches gets a zero gradient, and outputs keep
// their order after the loss. The unused branch's backward is not built.
// CHECK-LABEL: func.func @unreached_grad(
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss"}, tensor<3xf32> {graph.output = "aux"}, tensor<3xf32> {graph.grad = "used"}, tensor<3xf32> {graph.grad = "unused"})
// CHECK-NOT: graph.exp
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-NEXT: return %{{.*}}, %{{.*}}, %{{.*}}, %[[Z]]
graph.model @unreached {
  %a = graph.param "used" init(#graph.ones) : tensor<3xf32>
  %b = graph.param "unused" init(#graph.ones) : tensor<3xf32>
  %aux = graph.neg %b : tensor<3xf32>
  %l = graph.reduce_sum %a : tensor<3xf32> -> tensor<f32>
  graph.output aux = %aux : tensor<3xf32>, loss = %l : tensor<f32>
}

// -----

// Every differentiable op in one model: each VJP builds IR that verifies.
// Spot checks: mean over axes [1, -1] of 4x3 elements scales by 1/12; a
// layer_norm without weight differentiates with ones; q = k = v sum their
// cotangents; concat hands each input its slab; conv keeps groups/stride.
// CHECK-LABEL: func.func @every_op_grad(
// CHECK: %[[ATT:.*]], %[[DK:.*]], %[[DV:.*]] = graph.scaled_dot_product_attention_backward {{.*}} {causal}
// CHECK: %[[QK:.*]] = graph.add %[[ATT]], %[[DK]]
// CHECK: graph.add %[[QK]], %[[DV]]
// CHECK: graph.constant dense<0.0833333358> : tensor<f32>
// CHECK: graph.reshape %{{.*}} : tensor<2x3xf32> -> tensor<2x1x3x1xf32>
// CHECK: graph.avg_pool2d_backward %{{.*}} {kernel_size = array<i64: 2, 2>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<2x4x3x3xf32> -> tensor<2x4x2x2xf32>
// CHECK: graph.max_pool2d_backward
// CHECK: graph.conv2d_backward_weight %{{.*}}, %{{.*}} {groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x2x6x6xf32>, tensor<2x4x3x3xf32> -> tensor<4x1x3x3xf32>
// CHECK: graph.cross_entropy_backward %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64}
// CHECK: graph.reduce_max_backward %{{.*}}, %{{.*}} {axes = array<i64: 1>, keepdim = true}
// CHECK: graph.slice %{{.*}} {limits = array<i64: 2, 2, 3>, starts = array<i64: 0, 0, 0>} : tensor<2x4x3xf32> -> tensor<2x2x3xf32>
// CHECK: graph.slice %{{.*}} {limits = array<i64: 2, 4, 3>, starts = array<i64: 0, 2, 0>} : tensor<2x4x3xf32> -> tensor<2x2x3xf32>
// CHECK: graph.slice_backward %{{.*}} {limits = array<i64: 2, 3, 3>, starts = array<i64: 0, 1, 0>}
// CHECK: graph.slice_backward %{{.*}} {limits = array<i64: 2, 4, 3>, starts = array<i64: 0, 0, 0>, strides = array<i64: 1, 2, 1>}
// CHECK: graph.dropout %{{.*}} {key = 0 : i64, p = 1.000000e-01 : f64}
// CHECK: %[[ONES:.*]] = graph.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: graph.layer_norm_backward %{{.*}}, %[[ONES]], %{{.*}}
// CHECK: graph.rms_norm_backward
// CHECK: graph.layer_norm_backward
// CHECK: graph.pow %{{.*}} {exponent = 2.000000e+00 : f64}
// CHECK: graph.constant dense<3.000000e+00> : tensor<f32>
// CHECK: graph.gelu_backward %{{.*}}, %{{.*}} {approximate = "tanh"}
// CHECK: graph.relu_backward
// CHECK: graph.embedding_backward
// CHECK-NEXT: return
graph.model @every_op {
  %x = graph.input "x" : tensor<2x3x4xf32>
  %ids = graph.input "ids" : tensor<2x3xi64>
  %labels = graph.input "labels" : tensor<6xi64>
  %img = graph.input "img" : tensor<2x2x6x6xf32>
  %tgt = graph.input "tgt" : tensor<2x3x4xf32>
  %wte = graph.param "wte" init(#graph.zeros) : tensor<10x4xf32>
  %cw = graph.param "cw" init(#graph.zeros) : tensor<4x1x3x3xf32>
  %cb = graph.param "cb" init(#graph.zeros) : tensor<4xf32>
  %g1 = graph.param "ln.weight" init(#graph.ones) : tensor<4xf32>
  %b1 = graph.param "ln.bias" init(#graph.zeros) : tensor<4xf32>
  %g2 = graph.param "rms.weight" init(#graph.ones) : tensor<4xf32>
  %m = graph.param "m" init(#graph.zeros) : tensor<4x4xf32>
  %bm = graph.param "bm" init(#graph.zeros) : tensor<2x4x4xf32>
  %wl = graph.param "wl" init(#graph.zeros) : tensor<4x4xf32>
  %bl = graph.param "bl" init(#graph.zeros) : tensor<4xf32>
  %s = graph.param "s" init(#graph.ones) : tensor<1x3x1xf32>

  %e = graph.embedding %ids, %wte : tensor<2x3xi64>, tensor<10x4xf32> -> tensor<2x3x4xf32>
  %a = graph.add %x, %e : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %a2 = graph.sub %a, %s : tensor<2x3x4xf32>, tensor<1x3x1xf32> -> tensor<2x3x4xf32>
  %a3 = graph.mul %a2, %s : tensor<2x3x4xf32>, tensor<1x3x1xf32> -> tensor<2x3x4xf32>
  %a4 = graph.div %a3, %s : tensor<2x3x4xf32>, tensor<1x3x1xf32> -> tensor<2x3x4xf32>
  %n = graph.neg %a4 : tensor<2x3x4xf32>
  %r = graph.relu %n : tensor<2x3x4xf32>
  %ge = graph.gelu %r {approximate = "tanh"} : tensor<2x3x4xf32>
  %t = graph.tanh %ge : tensor<2x3x4xf32>
  %sg = graph.sigmoid %t : tensor<2x3x4xf32>
  %ex = graph.exp %sg : tensor<2x3x4xf32>
  %lg = graph.log %ex : tensor<2x3x4xf32>
  %sq = graph.sqrt %ex : tensor<2x3x4xf32>
  %rs = graph.rsqrt %ex : tensor<2x3x4xf32>
  %pw = graph.pow %lg {exponent = 3.0} : tensor<2x3x4xf32>
  %c1 = graph.add %sq, %rs : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %c2 = graph.add %c1, %pw : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %ln = graph.layer_norm %c2, %g1, %b1 : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
  %rn = graph.rms_norm %ln, %g2 : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
  %ln2 = graph.layer_norm %rn : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %sm = graph.softmax %ln2 {axis = -1} : tensor<2x3x4xf32>
  %lsm = graph.log_softmax %sm {axis = 1} : tensor<2x3x4xf32>
  %d = graph.dropout %lsm {p = 0.1} : tensor<2x3x4xf32>
  %bmm = graph.batch_matmul %d, %bm : tensor<2x3x4xf32>, tensor<2x4x4xf32> -> tensor<2x3x4xf32>
  %tr = graph.transpose %bmm {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %sl = graph.slice %tr {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 4, 3>, strides = array<i64: 1, 2, 1>} : tensor<2x4x3xf32> -> tensor<2x2x3xf32>
  %sl2 = graph.slice %tr {starts = array<i64: 0, 1, 0>, limits = array<i64: 2, 3, 3>} : tensor<2x4x3xf32> -> tensor<2x2x3xf32>
  %cc = graph.concat %sl, %sl2 {axis = -2} : tensor<2x2x3xf32>, tensor<2x2x3xf32> -> tensor<2x4x3xf32>
  %rsh = graph.reshape %cc : tensor<2x4x3xf32> -> tensor<6x4xf32>
  %mm = graph.matmul %rsh, %m : tensor<6x4xf32>, tensor<4x4xf32> -> tensor<6x4xf32>
  %lin = graph.linear %mm, %wl, %bl : tensor<6x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<6x4xf32>
  %h = graph.cast %lin : tensor<6x4xf32> -> tensor<6x4xf16>
  %hb = graph.cast %h : tensor<6x4xf16> -> tensor<6x4xf32>
  %rmax = graph.reduce_max %hb {axes = array<i64: 1>, keepdim = true} : tensor<6x4xf32> -> tensor<6x1xf32>
  %rb = graph.broadcast_to %rmax : tensor<6x1xf32> -> tensor<6x4xf32>
  %z = graph.sub %hb, %rb : tensor<6x4xf32>, tensor<6x4xf32> -> tensor<6x4xf32>
  %ce = graph.cross_entropy %z, %labels {ignore_index = 0, label_smoothing = 0.1} : tensor<6x4xf32>, tensor<6xi64> -> tensor<f32>

  %cv = graph.conv2d %img, %cw, %cb {groups = 2, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x2x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32> -> tensor<2x4x3x3xf32>
  %mp = graph.max_pool2d %cv {kernel_size = array<i64: 2, 2>, stride = array<i64: 1, 1>} : tensor<2x4x3x3xf32> -> tensor<2x4x2x2xf32>
  %ap = graph.avg_pool2d %mp {kernel_size = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>} : tensor<2x4x2x2xf32> -> tensor<2x4x3x3xf32>
  %rm = graph.reduce_mean %ap {axes = array<i64: 1, -1>} : tensor<2x4x3x3xf32> -> tensor<2x3xf32>
  %rsum = graph.reduce_sum %rm : tensor<2x3xf32> -> tensor<f32>

  %q = graph.reshape %lin : tensor<6x4xf32> -> tensor<1x2x3x4xf32>
  %att = graph.scaled_dot_product_attention %q, %q, %q {causal} : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
  %att2 = graph.reshape %att : tensor<1x2x3x4xf32> -> tensor<2x3x4xf32>
  %mse = graph.mse_loss %att2, %tgt : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<f32>

  %l1 = graph.add %ce, %rsum : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %l1, %mse : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output probs = %sm : tensor<2x3x4xf32>, loss = %l : tensor<f32>
}

// -----

// An op without a VJP that the loss depends on through a parameter.
graph.model @nondiff {
  %x = graph.input "x" : tensor<3xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<3xf32>
  // expected-error @+1 {{'graph.relu_backward' op is not differentiable (it implements no VJPOpInterface), but the loss depends on it through a parameter}}
  %d = graph.relu_backward %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.reduce_sum %d : tensor<3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// The whole mlp example has three linear backwards (the first without dx), relu
// backwards between them, cross_entropy_backward seeded with the loss scale.
// MLP-LABEL: graph.model @mlp
// MLP-LABEL: func.func @mlp_grad(
// MLP-SAME: %[[IMG:[^:]*]]: tensor<128x784xf32> {graph.input = "image"}, %[[LBL:[^:]*]]: tensor<128xi64> {graph.input = "label"}
// MLP-SAME: %[[W1:[^:]*]]: tensor<256x784xf32> {graph.param = "fc1.weight"}, %[[B1:[^:]*]]: tensor<256xf32> {graph.param = "fc1.bias"}
// MLP-SAME: %[[W2:[^:]*]]: tensor<128x256xf32> {graph.param = "fc2.weight"}, %[[B2:[^:]*]]: tensor<128xf32> {graph.param = "fc2.bias"}
// MLP-SAME: %[[W3:[^:]*]]: tensor<10x128xf32> {graph.param = "fc3.weight"}, %[[B3:[^:]*]]: tensor<10xf32> {graph.param = "fc3.bias"}
// MLP-SAME: %[[S:[^:]*]]: tensor<f32> {graph.loss_scale})
// MLP-SAME: -> (tensor<f32> {graph.output = "loss"}, tensor<128x10xf32> {graph.output = "logits"},
// MLP-SAME: tensor<256x784xf32> {graph.grad = "fc1.weight"}, tensor<256xf32> {graph.grad = "fc1.bias"}, tensor<128x256xf32> {graph.grad = "fc2.weight"}, tensor<128xf32> {graph.grad = "fc2.bias"}, tensor<10x128xf32> {graph.grad = "fc3.weight"}, tensor<10xf32> {graph.grad = "fc3.bias"})
// MLP: %[[H1:.*]] = graph.linear %[[IMG]], %[[W1]], %[[B1]]
// MLP: %[[A1:.*]] = graph.relu %[[H1]]
// MLP: %[[H2:.*]] = graph.linear %[[A1]], %[[W2]], %[[B2]]
// MLP: %[[A2:.*]] = graph.relu %[[H2]]
// MLP: %[[Z:.*]] = graph.linear %[[A2]], %[[W3]], %[[B3]]
// MLP: %[[L:.*]] = graph.cross_entropy %[[Z]], %[[LBL]]
// MLP: %[[DZ:.*]] = graph.cross_entropy_backward %[[Z]], %[[LBL]], %[[S]] : tensor<128x10xf32>, tensor<128xi64>, tensor<f32> -> tensor<128x10xf32>
// MLP: %[[DA2:.*]] = graph.matmul %[[DZ]], %[[W3]]
// MLP: %[[DZT:.*]] = graph.transpose %[[DZ]]
// MLP: %[[DW3:.*]] = graph.matmul %[[DZT]], %[[A2]]
// MLP: %[[DB3:.*]] = graph.reduce_sum %[[DZ]] {axes = array<i64: 0>}
// MLP: %[[DH2:.*]] = graph.relu_backward %[[H2]], %[[DA2]]
// MLP: %[[DA1:.*]] = graph.matmul %[[DH2]], %[[W2]]
// MLP: %[[DH2T:.*]] = graph.transpose %[[DH2]]
// MLP: %[[DW2:.*]] = graph.matmul %[[DH2T]], %[[A1]]
// MLP: %[[DB2:.*]] = graph.reduce_sum %[[DH2]] {axes = array<i64: 0>}
// MLP: %[[DH1:.*]] = graph.relu_backward %[[H1]], %[[DA1]]
// MLP: %[[DH1T:.*]] = graph.transpose %[[DH1]]
// MLP: %[[DW1:.*]] = graph.matmul %[[DH1T]], %[[IMG]]
// MLP: %[[DB1:.*]] = graph.reduce_sum %[[DH1]] {axes = array<i64: 0>}
// MLP-NEXT: return %[[L]], %[[Z]], %[[DW1]], %[[DB1]], %[[DW2]], %[[DB2]], %[[DW3]], %[[DB3]]

// In the cnn example, conv backwards use the backward ops; the first conv needs no dx.
// CNN-LABEL: func.func @cnn_grad(
// CNN: graph.cross_entropy_backward
// CNN: graph.reshape %{{.*}} : tensor<64x1568xf32> -> tensor<64x32x7x7xf32>
// CNN: graph.max_pool2d_backward %{{.*}} {kernel_size = array<i64: 2, 2>} : tensor<64x32x14x14xf32>, tensor<64x32x7x7xf32> -> tensor<64x32x14x14xf32>
// CNN: graph.relu_backward
// CNN: graph.conv2d_backward_input %{{.*}}, %{{.*}} {padding = array<i64: 1, 1>} : tensor<64x32x14x14xf32>, tensor<32x16x3x3xf32> -> tensor<64x16x14x14xf32>
// CNN: graph.conv2d_backward_weight %{{.*}}, %{{.*}} {padding = array<i64: 1, 1>} : tensor<64x16x14x14xf32>, tensor<64x32x14x14xf32> -> tensor<32x16x3x3xf32>
// CNN: graph.reduce_sum %{{.*}} {axes = array<i64: 0, 2, 3>} : tensor<64x32x14x14xf32> -> tensor<32xf32>
// CNN: graph.max_pool2d_backward
// CNN: graph.relu_backward
// CNN-NOT: graph.conv2d_backward_input
// CNN: graph.conv2d_backward_weight %{{.*}}, %{{.*}} {padding = array<i64: 1, 1>} : tensor<64x1x28x28xf32>, tensor<64x16x28x28xf32> -> tensor<16x1x3x3xf32>
// CNN: graph.reduce_sum %{{.*}} {axes = array<i64: 0, 2, 3>} : tensor<64x16x28x28xf32> -> tensor<16xf32>
// CNN-NEXT: return

// -----

// Buffers come after the loss scale as graph.buffer arguments; batch_norm's
// VJP is one batch_norm_backward, and the running statistics get no
// cotangent (the gradients are of the parameters only).
// CHECK-LABEL: func.func @bn_grad
// CHECK-SAME: {graph.param = "w"}
// CHECK-SAME: {graph.loss_scale}
// CHECK-SAME: %[[RM:[^:]*]]: tensor<4xf32> {graph.buffer = "bn.running_mean"}
// CHECK-SAME: %[[RV:[^:]*]]: tensor<4xf32> {graph.buffer = "bn.running_var"}
// CHECK: graph.batch_norm %{{.*}}, %[[RM]], %[[RV]],
// CHECK: graph.batch_norm_backward
// CHECK: return {{.*}} : tensor<f32>, tensor<4xf32>, tensor<4xf32>
graph.model @bn {
  %x = graph.input "x" : tensor<8x4xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "bn.running_mean" init(#graph.zeros) : tensor<4xf32>
  %rv = graph.buffer "bn.running_var" init(#graph.ones) : tensor<4xf32>
  %y = graph.batch_norm %x, %rm, %rv, %w, %b : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %l = graph.reduce_sum %y : tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

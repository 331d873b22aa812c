// RUN: ampc-opt %s --split-input-file --graph-autocast | FileCheck %s
// RUN: ampc-opt %s --split-input-file --graph-autocast=mode=bf16 | FileCheck %s --check-prefix=BF16
// RUN: ampc-opt %s --split-input-file --graph-autocast=policy=%S/Inputs/autocast-moves.policy | FileCheck %s --check-prefix=POLICY
// RUN: ampc-opt %s --split-input-file --graph-autocast=policy=%S/Inputs/autocast-empty-base.policy | FileCheck %s --check-prefix=EMPTY
// RUN: not ampc-opt %s --split-input-file --graph-autocast=policy=%S/Inputs/autocast-unknown-op.policy 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not ampc-opt %s --split-input-file --graph-autocast=mode=fp8 2>&1 | FileCheck %s --check-prefix=BADMODE
// RUN: cd %S && ampc-opt Inputs/autocast-loc-pin.mlir --graph-autocast=policy=Inputs/autocast-loc-pin.policy | FileCheck %s --check-prefix=LOCPIN
// RUN: ampc-opt %S/Inputs/autocast-name-pin.mlir --graph-autocast=policy=%S/Inputs/autocast-name-pin.policy | FileCheck %s --check-prefix=NAMEPIN
// RUN: cd %S && not ampc-opt Inputs/autocast-name-pin.mlir --graph-autocast=policy=Inputs/autocast-bad-pins.policy 2>&1 | FileCheck %s --check-prefix=BADPIN

// ERR: autocast-unknown-op.policy:3:14: error: unknown op 'softmx' in the policy
// BADMODE: error: graph-autocast: mode must be fp16 or bf16, got 'fp8'

// A policy pin by name (`pin fp32: proj`) catches the op located loc("proj").
// NAMEPIN-LABEL: graph.model @namepin
// NAMEPIN:       graph.matmul {{.*}}amp.precision = "fp16", amp.rule = "lower-list (gemm)"
// NAMEPIN:       graph.matmul {{.*}}amp.precision = "fp16", amp.rule = "lower-list (gemm)"
// NAMEPIN:       graph.matmul {{.*}}{amp.precision = "fp32", amp.rule = "pin (policy file line 2)"}

// A pin that matches no op is an error at its policy line and column, with
// the closest op names (edit distance) or the closest op lines of its file.
// BADPIN: autocast-bad-pins.policy:2:11: error: pin 'prj' matches no op of the model; closest op names: proj, attn_proj
// BADPIN: autocast-bad-pins.policy:3:11: error: pin 'Inputs/autocast-name-pin.mlir:8' matches no op of the model; closest ops: autocast-name-pin.mlir:7:8, autocast-name-pin.mlir:9:8
// BADPIN: autocast-bad-pins.policy:4:11: error: pin 'other.mlir:7' matches no op of the model (no op of the model is in a file named 'other.mlir')
// BADPIN-NOT: error

// LOCPIN-LABEL: graph.model @locpin
// LOCPIN: graph.matmul {{.*}}amp.precision = "fp16", amp.rule = "lower-list (gemm)"
// LOCPIN: graph.matmul {{.*}}amp.precision = "fp32", amp.rule = "pin (policy file line 2)"{{.*}}: tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>

// GEMM-shaped ops run in half; their operands are cast, the FP32 parameter
// stays FP32 (master weight) and its half copy sits right after it.
// CHECK-LABEL: graph.model @gemms
// CHECK:      %[[X:.*]] = graph.input "x" : tensor<4x8xf32>
// CHECK-NEXT: %[[XH:.*]] = graph.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NEXT: %[[W:.*]] = graph.param "w" {{.*}} : tensor<16x8xf32>
// CHECK-NEXT: %[[WH:.*]] = graph.cast %[[W]] : tensor<16x8xf32> -> tensor<16x8xf16>
// CHECK-NEXT: %[[B:.*]] = graph.param "b" {{.*}} : tensor<16xf32>
// CHECK-NEXT: %[[BH:.*]] = graph.cast %[[B]] : tensor<16xf32> -> tensor<16xf16>
// CHECK:      %[[Y:.*]] = graph.linear %[[XH]], %[[WH]], %[[BH]] {amp.precision = "fp16", amp.rule = "lower-list (gemm)"} : tensor<4x8xf16>, tensor<16x8xf16>, tensor<16xf16> -> tensor<4x16xf16>
// CHECK:      graph.matmul {{.*}}{amp.precision = "fp16", amp.rule = "lower-list (gemm)"} : tensor<4x16xf16>, tensor<16x2xf16> -> tensor<4x2xf16>
// CHECK:      graph.cast {{.*}} : tensor<4x2xf16> -> tensor<4x2xf32>
// CHECK:      graph.reduce_sum {{.*}}amp.precision = "fp32", amp.rule = "fp32-list (reduction)"{{.*}} : tensor<4x2xf32> -> tensor<f32>
// BF16-LABEL: graph.model @gemms
// BF16:       graph.linear {{.*}}{amp.precision = "bf16", amp.rule = "lower-list (gemm)"} : tensor<4x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16> -> tensor<4x16xbf16>
// BF16:       graph.matmul {{.*}} -> tensor<4x2xbf16>
// EMPTY-LABEL: graph.model @gemms
// EMPTY:       graph.linear {{.*}}amp.precision = "fp32", amp.rule = "unlisted (promote, widest input: f32)"
// EMPTY:       graph.matmul {{.*}}amp.precision = "fp16", amp.rule = "lower-list (policy file line 2)"
graph.model @gemms {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<16x8xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<16xf32>
  %v = graph.param "v" init(#graph.zeros) : tensor<16x2xf32>
  %y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %z = graph.matmul %y, %v : tensor<4x16xf32>, tensor<16x2xf32> -> tensor<4x2xf32>
  %l = graph.reduce_sum %z : tensor<4x2xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.model @conv_and_attention
// CHECK:       graph.conv2d {{.*}}amp.precision = "fp16", amp.rule = "lower-list (conv)"{{.*}} : tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16> -> tensor<2x4x6x6xf16>
// CHECK:       graph.batch_matmul {{.*}}amp.precision = "fp16", amp.rule = "lower-list (gemm)"
// CHECK:       graph.scaled_dot_product_attention {{.*}}amp.precision = "fp16", amp.rule = "lower-list (attention)"{{.*}} -> tensor<1x2x4x8xf16>
graph.model @conv_and_attention {
  %x = graph.input "x" : tensor<2x3x8x8xf32>
  %q = graph.input "q" : tensor<1x2x4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<4x3x3x3xf32>
  %c = graph.conv2d %x, %w : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  %r = graph.reshape %c : tensor<2x4x6x6xf32> -> tensor<2x12x12xf32>
  %m = graph.batch_matmul %r, %r : tensor<2x12x12xf32>, tensor<2x12x12xf32> -> tensor<2x12x12xf32>
  %a = graph.scaled_dot_product_attention %q, %q, %q {causal} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %s1 = graph.reduce_sum %m : tensor<2x12x12xf32> -> tensor<f32>
  %s2 = graph.reduce_sum %a : tensor<1x2x4x8xf32> -> tensor<f32>
  %l = graph.add %s1, %s2 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// softmax, layer_norm and cross_entropy stay FP32 although a half matmul
// feeds them: one f16 -> f32 cast of the matmul result serves all three.
// CHECK-LABEL: graph.model @fp32_list
// CHECK:       %[[H:.*]] = graph.matmul {{.*}} -> tensor<4x8xf16>
// CHECK-NEXT:  %[[HF:.*]] = graph.cast %[[H]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK-NOT:   graph.cast
// CHECK:       graph.softmax %[[HF]] {amp.precision = "fp32", amp.rule = "fp32-list (softmax)"{{.*}} : tensor<4x8xf32>
// CHECK:       graph.layer_norm %[[HF]], {{.*}}amp.precision = "fp32", amp.rule = "fp32-list (normalization)"{{.*}} -> tensor<4x8xf32>
// CHECK:       graph.cross_entropy %[[HF]], {{.*}}amp.precision = "fp32", amp.rule = "fp32-list (loss)"{{.*}} -> tensor<f32>
// CHECK:       graph.exp {{.*}}amp.rule = "fp32-list (pointwise math)"
// CHECK:       graph.output loss = %{{.*}} : tensor<f32>
graph.model @fp32_list {
  %x = graph.input "x" : tensor<4x8xf32>
  %y = graph.input "y" : tensor<4xi64>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %g = graph.param "g" init(#graph.ones) : tensor<8xf32>
  %h = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %p = graph.softmax %h {axis = -1} : tensor<4x8xf32>
  %n = graph.layer_norm %h, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %ce = graph.cross_entropy %h, %y : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
  %e = graph.exp %ce : tensor<f32>
  %s1 = graph.reduce_sum %p : tensor<4x8xf32> -> tensor<f32>
  %s2 = graph.reduce_sum %n : tensor<4x8xf32> -> tensor<f32>
  %t = graph.add %s1, %s2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %t, %e : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// add of a half value and an FP32 value runs in FP32 (the widest input);
// relu and reshape follow their input; gelu follows by default and is moved
// to the fp32 list by the POLICY file, add to the lower list.
// CHECK-LABEL: graph.model @promote_follow
// CHECK:       %[[H:.*]] = graph.matmul {{.*}} -> tensor<4x8xf16>
// CHECK:       %[[R:.*]] = graph.relu %[[H]] {amp.precision = "fp16", amp.rule = "follows operand 0"} : tensor<4x8xf16>
// CHECK:       %[[RF:.*]] = graph.cast %[[R]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK:       graph.add %[[RF]], %{{.*}} {amp.precision = "fp32", amp.rule = "promote (widest input: f32)"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK:       graph.gelu %[[R]] {amp.precision = "fp16", amp.rule = "follows operand 0"} : tensor<4x8xf16>
// CHECK:       graph.reshape {{.*}}amp.rule = "follows operand 0"{{.*}} : tensor<4x8xf16> -> tensor<32xf16>
// CHECK:       graph.mul {{.*}}amp.precision = "fp16", amp.rule = "promote (widest input: f16)"
// POLICY-LABEL: graph.model @promote_follow
// POLICY:       graph.add {{.*}}amp.precision = "fp16", amp.rule = "lower-list (policy file line 4)"{{.*}} : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
// POLICY:       graph.gelu {{.*}}amp.precision = "fp32", amp.rule = "fp32-list (policy file line 3)"{{.*}} : tensor<4x8xf32>
// POLICY:       graph.mul {{.*}}amp.rule = "promote (widest input: f32)"
// POLICY:       %[[L:.*]] = graph.add {{.*}} -> tensor<f16>
// POLICY:       %[[LF:.*]] = graph.cast %[[L]] : tensor<f16> -> tensor<f32>
// POLICY:       graph.output loss = %[[LF]] : tensor<f32>
graph.model @promote_follow {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<8xf32>
  %h = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %r = graph.relu %h : tensor<4x8xf32>
  %a = graph.add %r, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %g = graph.gelu %r : tensor<4x8xf32>
  %f = graph.reshape %g : tensor<4x8xf32> -> tensor<32xf32>
  %m = graph.mul %f, %f : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  %s1 = graph.reduce_sum %a : tensor<4x8xf32> -> tensor<f32>
  %s2 = graph.reduce_sum %m : tensor<32xf32> -> tensor<f32>
  %l = graph.add %s1, %s2 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// A precision pin in the model file wins over the lists (and over the
// policy file); "half" means the mode's half type.
// CHECK-LABEL: graph.model @pins
// CHECK:       graph.matmul {{.*}}{amp.precision = "fp32", amp.rule = "pin (model file)", precision = "fp32"} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK:       graph.layer_norm {{.*}}{amp.precision = "fp16", amp.rule = "pin (model file)", precision = "half"} : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK:       graph.matmul {{.*}}amp.precision = "fp16", amp.rule = "lower-list (gemm)"
// BF16-LABEL:  graph.model @pins
// BF16:        graph.layer_norm {{.*}}{amp.precision = "bf16", amp.rule = "pin (model file)", precision = "half"} : tensor<4x8xbf16> -> tensor<4x8xbf16>
// POLICY-LABEL: graph.model @pins
// POLICY:       graph.matmul {{.*}}amp.rule = "pin (model file)"
// POLICY:       graph.layer_norm {{.*}}amp.rule = "pin (model file)"
graph.model @pins {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %h = graph.matmul %x, %w {precision = "fp32"} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %n = graph.layer_norm %h {precision = "half"} : tensor<4x8xf32> -> tensor<4x8xf32>
  %p = graph.matmul %n, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("proj")
  %l = graph.reduce_sum %p : tensor<4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// Cast caching: a weight used by two matmuls (and by an FP32 op) has exactly
// one half copy; the FP32 use takes the parameter itself.
// CHECK-LABEL: graph.model @shared_weight
// CHECK:       %[[W:.*]] = graph.param "w"
// CHECK-NEXT:  %[[WH:.*]] = graph.cast %[[W]] : tensor<8x8xf32> -> tensor<8x8xf16>
// CHECK-NOT:   graph.cast %[[W]]
// CHECK:       graph.matmul %{{.*}}, %[[WH]]
// CHECK:       graph.matmul %{{.*}}, %[[WH]]
// CHECK:       graph.softmax %[[W]]
graph.model @shared_weight {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %a = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %b = graph.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %s = graph.softmax %w {axis = 0} : tensor<8x8xf32>
  %l1 = graph.reduce_sum %b : tensor<4x8xf32> -> tensor<f32>
  %l2 = graph.reduce_sum %s : tensor<8x8xf32> -> tensor<f32>
  %l = graph.add %l1, %l2 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// Exact cast pairs fold (the model's f16 -> f32 cast feeding a half matmul
// leaves the matmul on the f16 input); inexact ones (f32 -> f16 -> f32
// rounds) stay. Duplicate casts merge.
// CHECK-LABEL: graph.model @cast_pairs
// CHECK:       %[[H:.*]] = graph.input "h" : tensor<4x8xf16>
// CHECK-NOT:   graph.cast %[[H]]
// CHECK:       %[[X:.*]] = graph.input "x" : tensor<4x8xf32>
// CHECK-NOT:   graph.cast %[[H]]
// CHECK:       graph.matmul %[[H]], %{{.*}} {amp.precision = "fp16"
// CHECK:       %[[XH:.*]] = graph.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NOT:   graph.cast %[[X]]
// CHECK:       %[[BACK:.*]] = graph.cast %[[XH]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK:       graph.softmax %[[BACK]]
// CHECK:       graph.relu %[[XH]] {{.*}}: tensor<4x8xf16>
graph.model @cast_pairs {
  %h = graph.input "h" : tensor<4x8xf16>
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %hf = graph.cast %h : tensor<4x8xf16> -> tensor<4x8xf32>
  %m = graph.matmul %hf, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %xh = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %xh2 = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %back = graph.cast %xh : tensor<4x8xf16> -> tensor<4x8xf32>
  %s = graph.softmax %back {axis = -1} : tensor<4x8xf32>
  %r = graph.relu %xh2 : tensor<4x8xf16>
  %s1 = graph.reduce_sum %m : tensor<4x8xf32> -> tensor<f32>
  %s2 = graph.reduce_sum %s : tensor<4x8xf32> -> tensor<f32>
  %r32 = graph.cast %r : tensor<4x8xf16> -> tensor<4x8xf32>
  %s3 = graph.reduce_sum %r32 : tensor<4x8xf32> -> tensor<f32>
  %t = graph.add %s1, %s2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %t, %s3 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// Integer tensors are never cast; embedding follows its (FP32) table; a
// model output that became half is cast back to its declared type.
// CHECK-LABEL: graph.model @ints_and_outputs
// CHECK:       %[[IDS:.*]] = graph.input "ids" : tensor<2x4xi64>
// CHECK-NOT:   graph.cast %[[IDS]]
// CHECK:       graph.reshape %[[IDS]] {amp.precision = "i64", amp.rule = "integer (never cast)"} : tensor<2x4xi64> -> tensor<8xi64>
// CHECK:       graph.embedding {{.*}}{amp.precision = "fp32", amp.rule = "follows operand 1"} : tensor<8xi64>, tensor<16x8xf32> -> tensor<8x8xf32>
// CHECK:       %[[Z:.*]] = graph.linear {{.*}} -> tensor<8x16xf16>
// CHECK:       %[[ZF:.*]] = graph.cast %[[Z]] : tensor<8x16xf16> -> tensor<8x16xf32>
// CHECK:       graph.output loss = %{{.*}} : tensor<f32>, logits = %[[ZF]] : tensor<8x16xf32>
graph.model @ints_and_outputs {
  %ids = graph.input "ids" : tensor<2x4xi64>
  %t = graph.param "t" init(#graph.zeros) : tensor<16x8xf32>
  %flat = graph.reshape %ids : tensor<2x4xi64> -> tensor<8xi64>
  %e = graph.embedding %flat, %t : tensor<8xi64>, tensor<16x8xf32> -> tensor<8x8xf32>
  %z = graph.linear %e, %t : tensor<8x8xf32>, tensor<16x8xf32> -> tensor<8x16xf32>
  %l = graph.cross_entropy %z, %flat : tensor<8x16xf32>, tensor<8xi64> -> tensor<f32>
  graph.output loss = %l : tensor<f32>, logits = %z : tensor<8x16xf32>
}

// -----

// The activations and pointwise math of issue 13 are on no PyTorch autocast
// list and follow their input; reciprocal and softplus are on PyTorch's fp32
// list; maximum/minimum promote like add. reduce_mean follows its input:
// PyTorch has no autocast entry for mean (sum has one), so a half input gives
// a half mean.
// CHECK-LABEL: graph.model @new_ops
// CHECK:      %[[H:.*]] = graph.matmul {{.*}} -> tensor<4x8xf16>
// CHECK-NEXT: graph.silu %[[H]] {amp.precision = "fp16", amp.rule = "follows operand 0"} : tensor<4x8xf16>
// CHECK-NEXT: graph.leaky_relu {{.*}}amp.rule = "follows operand 0"{{.*}} : tensor<4x8xf16>
// CHECK-NEXT: graph.abs {{.*}}amp.rule = "follows operand 0"{{.*}} : tensor<4x8xf16>
// CHECK-NEXT: graph.clamp {{.*}}amp.rule = "follows operand 0"{{.*}} : tensor<4x8xf16>
// CHECK-NEXT: graph.erf {{.*}}amp.rule = "follows operand 0"{{.*}} : tensor<4x8xf16>
// CHECK-NEXT: graph.sin {{.*}}amp.rule = "follows operand 0"{{.*}} : tensor<4x8xf16>
// CHECK-NEXT: %[[CO:.*]] = graph.cos {{.*}}amp.rule = "follows operand 0"{{.*}} : tensor<4x8xf16>
// CHECK-NEXT: %[[COF:.*]] = graph.cast %[[CO]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK-NEXT: graph.reciprocal %[[COF]] {amp.precision = "fp32", amp.rule = "fp32-list (pointwise math)"} : tensor<4x8xf32>
// CHECK-NEXT: graph.softplus %[[COF]] {amp.precision = "fp32", amp.rule = "fp32-list (pointwise math)"} : tensor<4x8xf32>
// CHECK-NEXT: graph.maximum %[[COF]], %{{.*}} {amp.precision = "fp32", amp.rule = "promote (widest input: f32)"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[MN:.*]] = graph.minimum %[[CO]], %[[CO]] {amp.precision = "fp16", amp.rule = "promote (widest input: f16)"} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK-NEXT: %[[M:.*]] = graph.reduce_mean %[[MN]] {amp.precision = "fp16", amp.rule = "follows operand 0"} : tensor<4x8xf16> -> tensor<f16>
// CHECK-NEXT: graph.cast %[[M]] : tensor<f16> -> tensor<f32>
// BF16-LABEL: graph.model @new_ops
// BF16:       graph.silu {{.*}}amp.precision = "bf16"{{.*}} : tensor<4x8xbf16>
// BF16:       graph.reduce_mean {{.*}}amp.precision = "bf16", amp.rule = "follows operand 0"{{.*}} -> tensor<bf16>
graph.model @new_ops {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<8xf32>
  %h = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %s = graph.silu %h : tensor<4x8xf32>
  %k = graph.leaky_relu %s : tensor<4x8xf32>
  %a = graph.abs %k : tensor<4x8xf32>
  %c = graph.clamp %a {min = -1.0} : tensor<4x8xf32>
  %e = graph.erf %c : tensor<4x8xf32>
  %si = graph.sin %e : tensor<4x8xf32>
  %co = graph.cos %si : tensor<4x8xf32>
  %r = graph.reciprocal %co : tensor<4x8xf32>
  %p = graph.softplus %co : tensor<4x8xf32>
  %mx = graph.maximum %co, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %mn = graph.minimum %co, %co : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %m = graph.reduce_mean %mn : tensor<4x8xf32> -> tensor<f32>
  %s1 = graph.reduce_sum %r : tensor<4x8xf32> -> tensor<f32>
  %s2 = graph.reduce_sum %p : tensor<4x8xf32> -> tensor<f32>
  %s3 = graph.reduce_sum %mx : tensor<4x8xf32> -> tensor<f32>
  %t1 = graph.add %s1, %s2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %t2 = graph.add %t1, %s3 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %t2, %m : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// where promotes its float operands like add (the integer condition is never
// cast); masked_fill follows its input (no PyTorch autocast entry).
// CHECK-LABEL: graph.model @select
// CHECK:      %[[C:.*]] = graph.input "c" : tensor<4x1xi64>
// CHECK:      %[[H:.*]] = graph.matmul {{.*}} -> tensor<4x8xf16>
// CHECK-NEXT: %[[HF:.*]] = graph.cast %[[H]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK-NEXT: graph.where %[[C]], %[[HF]], %{{.*}} {amp.precision = "fp32", amp.rule = "promote (widest input: f32)"} : tensor<4x1xi64>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: graph.masked_fill %[[H]], %[[C]] {amp.precision = "fp16", amp.rule = "follows operand 0", value = 0.000000e+00 : f64} : tensor<4x8xf16>, tensor<4x1xi64> -> tensor<4x8xf16>
graph.model @select {
  %x = graph.input "x" : tensor<4x8xf32>
  %c = graph.input "c" : tensor<4x1xi64>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<8xf32>
  %h = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %s = graph.where %c, %h, %b : tensor<4x1xi64>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %m = graph.masked_fill %h, %c {value = 0.0} : tensor<4x8xf32>, tensor<4x1xi64> -> tensor<4x8xf32>
  %s1 = graph.reduce_sum %s : tensor<4x8xf32> -> tensor<f32>
  %s2 = graph.reduce_sum %m : tensor<4x8xf32> -> tensor<f32>
  %l = graph.add %s1, %s2 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// The regression losses are on PyTorch's fp32 list (l1_loss, smooth_l1_loss,
// huber_loss in AT_FORALL_FP32).
// CHECK-LABEL: graph.model @losses
// CHECK:      %[[H:.*]] = graph.matmul {{.*}} -> tensor<4x8xf16>
// CHECK-NEXT: %[[HF:.*]] = graph.cast %[[H]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK-NEXT: graph.l1_loss %[[HF]], %{{.*}} {amp.precision = "fp32", amp.rule = "fp32-list (loss)"} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<f32>
// CHECK-NEXT: graph.smooth_l1_loss %[[HF]], {{.*}}amp.rule = "fp32-list (loss)"{{.*}} -> tensor<f32>
// CHECK-NEXT: graph.huber_loss %[[HF]], {{.*}}amp.rule = "fp32-list (loss)"{{.*}} -> tensor<4x8xf32>
graph.model @losses {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %h = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %a = graph.l1_loss %h, %t : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<f32>
  %b = graph.smooth_l1_loss %h, %t {beta = 0.5} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<f32>
  %c = graph.huber_loss %h, %t {reduction = "none"} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s = graph.reduce_sum %c : tensor<4x8xf32> -> tensor<f32>
  %ab = graph.add %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %ab, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// batch_norm is on the fp32 list (PyTorch's AT_FORALL_FP32 has batch_norm):
// its half input and affine are cast up; the running statistics are FP32
// state the op updates in place, never cast.
// CHECK-LABEL: graph.model @batch_norm
// CHECK:      %[[RM:.*]] = graph.buffer "rm"
// CHECK:      %[[RV:.*]] = graph.buffer "rv"
// CHECK:      %[[H:.*]] = graph.conv2d {{.*}} -> tensor<2x4x3x3xf16>
// CHECK-NEXT: %[[HF:.*]] = graph.cast %[[H]] : tensor<2x4x3x3xf16> -> tensor<2x4x3x3xf32>
// CHECK-NEXT: graph.batch_norm %[[HF]], %[[RM]], %[[RV]], %{{.*}}, %{{.*}} {amp.precision = "fp32", amp.rule = "fp32-list (normalization)"} : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x3x3xf32>
graph.model @batch_norm {
  %x = graph.input "x" : tensor<2x3x5x5xf32>
  %k = graph.param "k" init(#graph.normal<std = 0.1>) : tensor<4x3x3x3xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "rm" init(#graph.zeros) : tensor<4xf32>
  %rv = graph.buffer "rv" init(#graph.ones) : tensor<4xf32>
  %h = graph.conv2d %x, %k : tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x3x3xf32>
  %y = graph.batch_norm %h, %rm, %rv, %w, %b : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x3x3xf32>
  %l = graph.reduce_sum %y : tensor<2x4x3x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// group_norm is on the fp32 list (AT_FORALL_FP32).
// CHECK-LABEL: graph.model @group_norm
// CHECK: graph.group_norm {{.*}}amp.rule = "fp32-list (normalization)"{{.*}} -> tensor<2x4x3x3xf32>
graph.model @group_norm {
  %x = graph.input "x" : tensor<2x3x5x5xf32>
  %k = graph.param "k" init(#graph.normal<std = 0.1>) : tensor<4x3x3x3xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<4xf32>
  %h = graph.conv2d %x, %k : tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x3x3xf32>
  %y = graph.group_norm %h, %w, %b {num_groups = 2} : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x3x3xf32>
  %l = graph.reduce_sum %y : tensor<2x4x3x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

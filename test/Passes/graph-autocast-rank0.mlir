// RUN: ampc-opt %s --split-input-file --graph-autocast | FileCheck %s
// RUN: ampc-opt %s --split-input-file --graph-autocast=mode=bf16 | FileCheck %s --check-prefix=BF16

// Type promotion with rank-0 operands, as PyTorch's result_type: a 0-dim
// tensor (a scalar parameter, a constant) does not win against a dimensioned
// one, so `h * temperature` and `h / 2.0` stay half; a dimensioned FP32
// operand (even of one element) still promotes; rank-0 operands alone
// promote among themselves. The same cases run through PyTorch's own
// autocast in torch-autocast-rank0.test (Inputs/torch_autocast_rank0.py),
// which records the same decisions.
// CHECK-LABEL: graph.model @rank0
// CHECK:      %[[H:.*]] = graph.matmul {{.*}} -> tensor<4x8xf16>
// CHECK:      graph.mul %[[H]], %{{.*}} {amp.precision = "fp16", amp.rule = "promote (widest input: f16, rank-0 operands do not promote)"} : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
// CHECK:      graph.div %[[H]], %{{.*}} {amp.precision = "fp16", {{.*}}} : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
// CHECK:      graph.add %{{.*}}, %[[H]] {amp.precision = "fp16", {{.*}}} : tensor<f16>, tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK:      graph.maximum %[[H]], %{{.*}} {amp.precision = "fp16", {{.*}}} : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
// CHECK:      graph.where %{{.*}}, %[[H]], %{{.*}} {amp.precision = "fp16", {{.*}}} : tensor<4x1xi64>, tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
// CHECK:      graph.add %{{.*}}, %{{.*}} {amp.precision = "fp32", amp.rule = "promote (widest input: f32)"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK:      graph.sub %{{.*}}, %{{.*}} {amp.precision = "fp32", amp.rule = "promote (widest input: f32)"} : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xf32>
// CHECK:      %[[M:.*]] = graph.reduce_mean %[[H]] {{.*}} -> tensor<f16>
// CHECK:      graph.mul %{{.*}}, %{{.*}} {amp.precision = "fp32", amp.rule = "promote (widest input: f32)"} : tensor<f32>, tensor<f32> -> tensor<f32>
// BF16-LABEL: graph.model @rank0
// BF16:       graph.mul {{.*}}amp.precision = "bf16"{{.*}} : tensor<4x8xbf16>, tensor<bf16> -> tensor<4x8xbf16>
// BF16:       graph.div {{.*}}amp.precision = "bf16"{{.*}} : tensor<4x8xbf16>, tensor<bf16> -> tensor<4x8xbf16>
// BF16:       graph.add {{.*}}amp.precision = "bf16"{{.*}} : tensor<bf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
// BF16:       graph.maximum {{.*}}amp.precision = "bf16"
// BF16:       graph.where {{.*}}amp.precision = "bf16"
// BF16:       graph.add {{.*}}amp.precision = "fp32"{{.*}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// BF16:       graph.sub {{.*}}amp.precision = "fp32"{{.*}} : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xf32>
// BF16:       graph.mul {{.*}}amp.precision = "fp32"{{.*}} : tensor<f32>, tensor<f32> -> tensor<f32>
graph.model @rank0 {
  %x = graph.input "x" : tensor<4x8xf32>
  %c = graph.input "c" : tensor<4x1xi64>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %t = graph.param "temperature" init(#graph.ones) : tensor<f32>
  %b = graph.param "b" init(#graph.zeros) : tensor<8xf32>
  %one = graph.param "one" init(#graph.zeros) : tensor<1xf32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %h = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %m1 = graph.mul %h, %t : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %d = graph.div %h, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %a = graph.add %t, %h : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %mx = graph.maximum %h, %t : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %s = graph.where %c, %h, %t : tensor<4x1xi64>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %ab = graph.add %h, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %sb = graph.sub %h, %one : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xf32>
  %hm = graph.reduce_mean %h : tensor<4x8xf32> -> tensor<f32>
  %ss = graph.mul %hm, %t : tensor<f32>, tensor<f32> -> tensor<f32>
  %r1 = graph.reduce_sum %m1 : tensor<4x8xf32> -> tensor<f32>
  %r2 = graph.reduce_sum %d : tensor<4x8xf32> -> tensor<f32>
  %r3 = graph.reduce_sum %a : tensor<4x8xf32> -> tensor<f32>
  %r4 = graph.reduce_sum %mx : tensor<4x8xf32> -> tensor<f32>
  %r5 = graph.reduce_sum %s : tensor<4x8xf32> -> tensor<f32>
  %r6 = graph.reduce_sum %ab : tensor<4x8xf32> -> tensor<f32>
  %r7 = graph.reduce_sum %sb : tensor<4x8xf32> -> tensor<f32>
  %q1 = graph.add %r1, %r2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %q2 = graph.add %q1, %r3 : tensor<f32>, tensor<f32> -> tensor<f32>
  %q3 = graph.add %q2, %r4 : tensor<f32>, tensor<f32> -> tensor<f32>
  %q4 = graph.add %q3, %r5 : tensor<f32>, tensor<f32> -> tensor<f32>
  %q5 = graph.add %q4, %r6 : tensor<f32>, tensor<f32> -> tensor<f32>
  %q6 = graph.add %q5, %r7 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %q6, %ss : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// train-half-grads: a gradient @m_grad returns as a cast of an f16 or bf16
// value to f32, the cast used by nothing else, is returned in half and the
// cast goes (widening is exact; the runtime does it). Kept: a cast whose
// result something else reads, one returned twice, a gradient that is FP32
// already, and outputs.
// RUN: ampc-opt %s --train-half-grads | FileCheck %s
// The training pipeline runs it when asked (ampc compile --target=cuda does;
// the default is off), and only under AMP:
// RUN: ampc-opt %S/train-half-weight-copies.mlir --ampc-train-pipeline="amp=bf16 half-grads=1" | FileCheck %s --check-prefix=PIPE
// RUN: ampc-opt %S/train-half-weight-copies.mlir --ampc-train-pipeline="amp=bf16" | FileCheck %s --check-prefix=CASTS
// RUN: ampc-opt %S/train-half-weight-copies.mlir --ampc-train-pipeline="amp=off half-grads=1" | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @net_grad(
// CHECK-SAME:  -> (tensor<f32> {graph.output = "loss"}, tensor<3x8xbf16> {graph.grad = "a"}, tensor<3xf16> {graph.grad = "b"}, tensor<3xf32> {graph.grad = "c"}, tensor<3xf32> {graph.grad = "d"}, tensor<3xf32> {graph.grad = "e"}, tensor<3xf32> {graph.grad = "f"})
// CHECK-NOT:   graph.cast %arg0
// CHECK-NOT:   graph.cast %arg1
// CHECK:       %[[C:.*]] = graph.cast %arg2 : tensor<3xbf16> -> tensor<3xf32>
// CHECK:       %[[D:.*]] = graph.cast %arg3 : tensor<3xbf16> -> tensor<3xf32>
// CHECK:       %[[S:.*]] = graph.add %[[C]], %arg4
// CHECK:       %[[L:.*]] = graph.cast %arg5 : tensor<bf16> -> tensor<f32>
// CHECK:       return %[[L]], %arg0, %arg1, %[[C]], %[[D]], %[[D]], %arg4 :
// CHECK-SAME:  tensor<f32>, tensor<3x8xbf16>, tensor<3xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
func.func @net_grad(%arg0: tensor<3x8xbf16>, %arg1: tensor<3xf16>,
                    %arg2: tensor<3xbf16>, %arg3: tensor<3xbf16>,
                    %arg4: tensor<3xf32>, %arg5: tensor<bf16>)
    -> (tensor<f32> {graph.output = "loss"},
        tensor<3x8xf32> {graph.grad = "a"}, tensor<3xf32> {graph.grad = "b"},
        tensor<3xf32> {graph.grad = "c"}, tensor<3xf32> {graph.grad = "d"},
        tensor<3xf32> {graph.grad = "e"}, tensor<3xf32> {graph.grad = "f"}) {
  %a = graph.cast %arg0 : tensor<3x8xbf16> -> tensor<3x8xf32>
  %b = graph.cast %arg1 : tensor<3xf16> -> tensor<3xf32>
  %c = graph.cast %arg2 : tensor<3xbf16> -> tensor<3xf32>
  %d = graph.cast %arg3 : tensor<3xbf16> -> tensor<3xf32>
  %s = graph.add %c, %arg4 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.cast %arg5 : tensor<bf16> -> tensor<f32>
  return %l, %a, %b, %c, %d, %d, %arg4 : tensor<f32>, tensor<3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
graph.model @net {
  %x = graph.input "x" : tensor<f32>
  graph.output loss = %x : tensor<f32>
}

// PIPE-LABEL: func.func @net_grad(
// PIPE-SAME:  -> (tensor<f32> {graph.output = "loss"}, tensor<3x8xbf16> {graph.grad = "fc.weight"}, tensor<3xbf16> {graph.grad = "fc.bias"}, tensor<3xf32> {graph.grad = "ln.weight"}, tensor<3xf32> {graph.grad = "ln.bias"})

// CASTS-LABEL: func.func @net_grad(
// CASTS-SAME:  -> (tensor<f32> {graph.output = "loss"}, tensor<3x8xf32> {graph.grad = "fc.weight"}, tensor<3xf32> {graph.grad = "fc.bias"},

// OFF-LABEL: func.func @net_grad(
// OFF-SAME:  -> (tensor<f32> {graph.output = "loss"}, tensor<3x8xf32> {graph.grad = "fc.weight"}, tensor<3xf32> {graph.grad = "fc.bias"},

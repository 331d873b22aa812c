// kernel-hoist-grads: each op that only finishes an FP32 gradient (here the
// casts of the bf16 weight gradients) moves to just after its operand, so
// the second layer's gradient is finished before the first layer's
// backward runs, not after the whole backward. Everything else keeps its
// order.
// RUN: ampc-opt %S/../Targets/cuda/Inputs/two_layers.mlir --graph-autocast=mode=bf16 --graph-autodiff --train-build-step=amp=bf16 --kernel-fuse-elementwise --kernel-hoist-grads | FileCheck %s
// RUN: ampc-opt %S/../Targets/cuda/Inputs/two_layers.mlir --graph-autocast=mode=bf16 --graph-autodiff --train-build-step=amp=bf16 --kernel-fuse-elementwise | FileCheck %s --check-prefix=END

// CHECK-LABEL: func.func @two_grad(
// CHECK:       %[[DW2:.*]] = graph.matmul %{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x8xbf16> -> tensor<8x8xbf16>
// CHECK-NEXT:  %[[G2:.*]] = kernel.fused_elementwise ins(%[[DW2]] : tensor<8x8xbf16>)
// CHECK:       } -> tensor<8x8xf32>
// CHECK-NEXT:  kernel.fused_elementwise
// CHECK:       %[[DW1:.*]] = graph.matmul %{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x8xbf16> -> tensor<8x8xbf16>
// CHECK-NEXT:  %[[G1:.*]] = kernel.fused_elementwise ins(%[[DW1]] : tensor<8x8xbf16>)
// CHECK:       return %{{.*}}, %[[G1]], %[[G2]] :

// Without it both casts wait for the end of the backward.
// END-LABEL: func.func @two_grad(
// END:       %[[DW2:.*]] = graph.matmul %{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x8xbf16> -> tensor<8x8xbf16>
// END:       %[[DW1:.*]] = graph.matmul %{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x8xbf16> -> tensor<8x8xbf16>
// END-NEXT:  kernel.fused_elementwise ins(%[[DW2]] : tensor<8x8xbf16>)
// END:       kernel.fused_elementwise ins(%[[DW1]] : tensor<8x8xbf16>)
// END:       return

// Fused regions with the same kernel text (the layers of a deep model, the
// evaluation pass repeating the training forward) are emitted once and
// launched by one name: nvcc's time grows with the kernel count. The weight
// casts are the example, so the step keeps them (--half-weight-copies=false --half-grads=false;
// by default it reads the epilogue's half copies instead).
// RUN: ampc compile %S/Inputs/two_layers.mlir --target=cuda --amp=fp16 --half-weight-copies=false --half-grads=false --emit=cpp -o - 2>/dev/null | FileCheck %s
// RUN: ampc compile %S/Inputs/two_layers.mlir --target=cuda --amp=fp16 --half-weight-copies=false --half-grads=false --emit=cpp -o - 2>/dev/null | grep -c __launch_bounds__ | FileCheck %s --check-prefix=COUNT

// The two 8x8 weight casts share fused_1; the x cast (32 elements) is its own.
// CHECK: // fused_0: cast
// CHECK-NEXT: fused_0(const float *__restrict__ a0, __half *__restrict__ r0)
// CHECK: q < 4;
// CHECK: // fused_1: cast
// CHECK-NEXT: fused_1(const float *__restrict__ a0, __half *__restrict__ r0)
// CHECK: q < 8;
// CHECK-NOT: __global__ {{.*}} fused_7(
// CHECK-LABEL: void runForwardBackward(int micro)
// CHECK: fused_1<<<grid(8), 256, 0, stream()>>>(p_w1, [[W1:t[0-9]+]]);
// CHECK: fused_1<<<grid(8), 256, 0, stream()>>>(p_w2, [[W2:t[0-9]+]]);
// The two f16 -> f32 weight-gradient casts share one kernel too (each
// right after its GEMM: kernel-hoist-grads).
// Each launch is followed by its error check.
// CHECK: [[G:fused_[0-9]+]]<<<grid(8), 256, 0, stream()>>>
// CHECK-NEXT: check(cudaGetLastError(), "[[G]]");
// CHECK-NEXT: storeGrad(1,
// CHECK-NEXT: gradReady(1);
// CHECK: // %{{[0-9]+}} = fused kernel [[G]]
// CHECK-NEXT: [[G]]<<<grid(8), 256, 0, stream()>>>
// CHECK-NEXT: check(cudaGetLastError(), "[[G]]");
// CHECK-NEXT: storeGrad(0,
// Evaluation launches the training forward's kernels.
// CHECK-LABEL: void runEvaluate(
// CHECK: fused_0<<<grid(4), 256, 0, stream()>>>(in_x,
// CHECK: fused_1<<<grid(8), 256, 0, stream()>>>(p_w1,
// CHECK: fused_1<<<grid(8), 256, 0, stream()>>>(p_w2,

// 7 distinct kernels for 14 fused launches.
// COUNT: {{^}}7{{$}}

// `ampc cost` names each fused launch as the emitted file does, so its rows
// line up with ncu's kernels.
// RUN: ampc cost %S/Inputs/two_layers.mlir --amp=fp16 --half-weight-copies=false --half-grads=false | FileCheck %s --check-prefix=COST
// COST: 0 fused fused_0 kernel.fused_elementwise %0
// COST-NEXT: 1 fused fused_1 kernel.fused_elementwise %1
// COST-NEXT: 2 fused fused_1 kernel.fused_elementwise %2
// COST: 12 fused fused_5 kernel.fused_elementwise %12
// COST-NEXT: 13 fused fused_6 kernel.fused_elementwise %13
// COST: 15 fused fused_5 kernel.fused_elementwise %15

// The printed CUDA compiles with nvcc against the runtime headers.
// REQUIRES: nvcc
// RUN: ampc-opt %S/../cpu/Inputs/net_grad.mlir \
// RUN:   --train-build-step="amp=bf16 loss-scale=none clip-norm=1.0 optimizer=adam" \
// RUN:   --train-fuse-epilogue --cse --kernel-fuse-elementwise --kernel-plan-memory \
// RUN:   | ampc-translate --ampc-emit-cuda -o %t.cu
// RUN: %nvcc -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I%src -c %t.cu -o %t.o
// The packed kernels (f32, bf16, f32 as 2 x 16 bytes) and both fallbacks.
// RUN: ampc-opt %S/Inputs/vec_grad.mlir \
// RUN:   --train-build-step="amp=bf16 loss-scale=none optimizer=sgd" \
// RUN:   --train-fuse-epilogue --cse --kernel-fuse-elementwise --kernel-plan-memory \
// RUN:   | ampc-translate --ampc-emit-cuda -o %t.vec.cu
// RUN: %nvcc -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I%src -c %t.vec.cu -o %t.vec.o
// Issue 13's activations and pointwise ops in fused kernels (forward and
// backward formulas of runtime/numerics/Elementwise.h on the device).
// RUN: ampc compile %S/../../e2e/Inputs/mlp_new_ops.mlir --target=cuda --amp=fp16 --emit=cpp -o %t.new.cu
// RUN: %nvcc -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I%src -c %t.new.cu -o %t.new.o
// Non-splat constants: the table handed to DeviceModel's constructor.
// RUN: ampc compile %S/Inputs/constant.mlir --target=cuda --emit=cpp -o %t.cst.cu
// RUN: %nvcc -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I%src -c %t.cst.cu -o %t.cst.o

// train-half-weight-copies in the emitted code: both targets mark the
// parameters whose half copy the runtime keeps (rt::ParamInfo::halfCopy)
// and bind the copies @two_grad reads to halfWeight(k), where the GEMMs
// read them; without AMP, or with --half-weight-copies=false, neither.
// RUN: ampc compile %S/cuda/Inputs/two_layers.mlir --target=cuda --amp=bf16 --emit=cpp -o - 2>/dev/null | FileCheck %s --check-prefix=CUDA
// RUN: ampc compile %S/cuda/Inputs/two_layers.mlir --target=cpu --amp=fp16 --emit=cpp -o - 2>/dev/null | FileCheck %s --check-prefix=CPU
// RUN: ampc compile %S/cuda/Inputs/two_layers.mlir --target=cpu --amp=fp16 --half-weight-copies=false --emit=cpp -o - 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: ampc compile %S/cuda/Inputs/two_layers.mlir --target=cuda --emit=cpp -o - 2>/dev/null | FileCheck %s --check-prefix=NONE

// CUDA: s.params[0].halfCopy = true;
// CUDA-NEXT: s.params[1].halfCopy = true;
// CUDA: __nv_bfloat16 *h_w1 = static_cast<__nv_bfloat16 *>(halfWeight(0));
// CUDA-NEXT: __nv_bfloat16 *h_w2 = static_cast<__nv_bfloat16 *>(halfWeight(1));
// CUDA: {h_w1, DType::BF16, 2, {8, 8}}
// CPU: half *h_w1 = static_cast<half *>(halfWeight(0));
// CPU-NEXT: half *h_w2 = static_cast<half *>(halfWeight(1));
// CPU: {h_w1, DType::F16, 2, {8, 8}}
// CPU: s.params[0].halfCopy = true;
// CPU-NEXT: s.params[1].halfCopy = true;
// NONE-NOT: halfCopy
// NONE-NOT: halfWeight

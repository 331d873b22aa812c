// `ampc compile` on a module that already holds @net_grad (autocast and
// autodiff are skipped then), up to the C++.
// RUN: ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --amp=fp16 --clip-norm=1 --lr=0.05 -o %t.fp16.cpp | FileCheck %s --check-prefix=PROGRESS
// RUN: FileCheck %s --check-prefix=FP16 < %t.fp16.cpp
// RUN: ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --amp=bf16 --optimizer=sgd 2>%t.err | FileCheck %s --check-prefix=BF16
// RUN: FileCheck %s --check-prefix=PROGRESS < %t.err
// RUN: rm -rf %t.dump && ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp -o %t.off.cpp --dump-ir %t.dump
// RUN: ls %t.dump | FileCheck %s --check-prefix=DUMP
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --amp=fp8 2>&1 | FileCheck %s --check-prefix=ERR-AMP
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --loss-scale=static:0 2>&1 | FileCheck %s --check-prefix=ERR-LS
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --nesterov 2>&1 | FileCheck %s --check-prefix=ERR-NESTEROV
// The defaults compiled into the binary follow the binary's rules for its
// own flags (finite, >= 0): NaN used to switch clipping off or be ignored.
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --loss-scale=static:1e400 2>&1 | FileCheck %s --check-prefix=ERR-LS-INF
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --clip-norm=nan 2>&1 | FileCheck %s --check-prefix=ERR-CLIP
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --clip-value=inf 2>&1 | FileCheck %s --check-prefix=ERR-CLIPV
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --lr=-0.5 2>&1 | FileCheck %s --check-prefix=ERR-LR
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --optimizer=sgd --momentum=nan 2>&1 | FileCheck %s --check-prefix=ERR-MOM
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --weight-decay=-1 2>&1 | FileCheck %s --check-prefix=ERR-WD
// RUN: not ampc cost %S/../Targets/cpu/Inputs/net_grad.mlir --clip-norm=nan 2>&1 | FileCheck %s --check-prefix=COST-CLIP
// RUN: not ampc-opt %S/../Targets/cpu/Inputs/net_grad.mlir --ampc-train-pipeline="lr=nan" 2>&1 | FileCheck %s --check-prefix=OPT-LR
// Floats in the binary: 1e39 would be inf there, a threshold of 1e-50 zero
// with clipping on, a scale of 1e-50 zero.
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --lr=1e39 2>&1 | FileCheck %s --check-prefix=ERR-LR-BIG
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --clip-norm=1e-50 2>&1 | FileCheck %s --check-prefix=ERR-CLIP-TINY
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --amp=fp16 --loss-scale=static:1e-50 2>&1 | FileCheck %s --check-prefix=ERR-LS-TINY
// A subnormal float scale: its reciprocal, which unscales, overflows.
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=cpp --amp=fp16 --loss-scale=static:1e-40 2>&1 | FileCheck %s --check-prefix=ERR-LS-SUBNORMAL
// ampc-opt's pipeline takes a negative weight decay as torch.optim's default.
// RUN: not ampc-opt %S/../Targets/cpu/Inputs/net_grad.mlir --ampc-train-pipeline="weight-decay=inf" 2>&1 | FileCheck %s --check-prefix=OPT-WD
// Past validate() (train-build-step alone), train.config's verifier applies
// the binary's rules.
// RUN: not ampc-opt %S/../Targets/cpu/Inputs/net_grad.mlir --train-build-step="growth-interval=0" 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: not ampc compile %S/../Targets/cpu/Inputs/net_grad.mlir --emit=obj 2>&1 | FileCheck %s --check-prefix=ERR-EMIT

// PROGRESS: [1/3] lowering {{.*}}net_grad.mlir (amp={{fp16|bf16}}, optimizer={{adamw|sgd}}, loss-scale={{dynamic|none}})

// FP16: s.config.amp = "fp16";
// FP16: s.config.lossScale = "dynamic";
// FP16: s.config.clipNorm = true;
// FP16: s.defaults.lr = 0.05f;
// FP16: s.defaults.clipNorm = 1.0f;

// BF16: s.config.amp = "bf16";
// BF16: s.config.optimizer = "sgd";
// BF16: s.config.lossScale = "none";

// DUMP: 00-model.mlir
// DUMP-NEXT: 01-graph-fold-gemm-transpose.mlir
// DUMP-NEXT: 02-graph-collapse-data-movement.mlir
// DUMP-NEXT: 03-train-build-step.mlir
// DUMP-NEXT: 04-train-drop-eval-outputs.mlir
// DUMP-NEXT: 05-train-fuse-epilogue.mlir
// DUMP-NEXT: 06-cse.mlir
// DUMP-NEXT: 07-graph-absorb-casts.mlir
// DUMP-NEXT: 08-graph-fuse-cross-entropy.mlir
// DUMP-NEXT: 09-graph-fuse-embedding-grad-sum.mlir
// DUMP-NEXT: 10-graph-fuse-bias-grad.mlir
// DUMP-NEXT: 11-kernel-fuse-elementwise.mlir
// DUMP-NEXT: 12-kernel-fuse-residual-norm.mlir
// DUMP-NEXT: 13-kernel-hoist-grads.mlir
// DUMP-NEXT: 14-kernel-plan-memory.mlir

// ERR-AMP: ampc: --amp=fp8: expected off, fp16 or bf16
// ERR-LS: ampc: --loss-scale=static:0: expected dynamic, static:S (S a finite float >= 1.17549435e-38) or none
// ERR-NESTEROV: ampc: --nesterov needs --optimizer=sgd
// ERR-LS-INF: ampc: --loss-scale=static:1e400: expected dynamic, static:S (S a finite float >= 1.17549435e-38) or none
// ERR-CLIP: ampc: --clip-norm=nan: must be a finite number >= 0
// ERR-CLIPV: ampc: --clip-value=inf: must be a finite number >= 0
// ERR-LR: ampc: --lr=-0.5: must be a finite number >= 0
// ERR-MOM: ampc: --momentum=nan: must be a finite number >= 0
// ERR-WD: ampc: --weight-decay=-1: must be a finite number >= 0
// COST-CLIP: ampc cost: --clip-norm=nan: must be a finite number >= 0
// OPT-LR: --lr=nan: must be a finite number >= 0
// ERR-LR-BIG: ampc: --lr=1e+39: must be at most 3.40282347e+38 (a float)
// ERR-CLIP-TINY: ampc: --clip-norm=1e-50: rounds to 0 as a float
// ERR-LS-TINY: ampc: --loss-scale=static:1e-50: expected dynamic, static:S (S a finite float >= 1.17549435e-38) or none
// ERR-LS-SUBNORMAL: ampc: --loss-scale=static:1e-40: expected dynamic, static:S (S a finite float >= 1.17549435e-38) or none
// OPT-WD: --weight-decay=inf: must be finite
// VERIFY: defaults: 'growth_interval' must be >= 1 (got 0)
// ERR-EMIT: ampc: --emit=obj: expected binary or cpp

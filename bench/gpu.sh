#!/usr/bin/env bash
# bench/gpu.sh - ampc's CUDA target on one GPU, side by side with PyTorch.
#
#   bench/gpu.sh [BUILD_DIR]             prepare + run, on a GPU machine
#   bench/gpu.sh prepare WORK [BUILD_DIR]  build and compile into WORK (no GPU
#                                        needed; BUNDLE=1 also copies the
#                                        shared libraries a machine with only
#                                        the CUDA toolkit lacks into WORK/lib)
#   bench/gpu.sh run WORK                the GPU part: needs the driver, the
#                                        CUDA libraries, python3 with torch;
#                                        no compiler, no MLIR, no network
#   bench/gpu.sh check WORK [BUILD_DIR]  back where it was prepared: the GPU
#                                        run's dumped first steps (cmp/*/
#                                        step1.st) against the reference
#                                        interpreter (ampc-stepcheck)
#   bench/gpu.sh pack WORK TARBALL       WORK as one .tar.xz (under 60 MiB)
#   bench/gpu.sh collect RESULTS.tar.gz WORK [BUILD_DIR]
#                                        a GPU run's results (bench/gpu/
#                                        device_run.sh) back into WORK, then
#                                        check, and the summary written to
#                                        bench/results/gpu-DATE.json
#
# The split exists because building needs no GPU: prepare on a build host,
# copy WORK (or its tarball) to a GPU machine, run there. For a GPU machine
# that gets only this repository and one carried folder (the `device` tool,
# 64 MiB): BUNDLE=1 prepare .gpu/work build, pack .gpu/work
# .gpu/carry/work.tar.xz, there `bash bench/gpu/device_run.sh
# .gpu/carry/work.tar.xz` (carrying .gpu/carry), here collect (README).
#
# run executes the GPU tests (the CUDA kernel gtests; every example's step
# against the CPU target, with the exact scaler trajectory; the step graphs
# are captured from the second step, so capture succeeding shows no host
# sync inside a step) and the benchmarks, then prints one table and issue
# 12's goals (reached or not) and writes res/summary.json. Order: B3, the
# profile, B2, B1, the tests, B4; with DEADLINE=SECONDS a section that would
# end past it is skipped and named.
#   B1  the fused AMP epilogue alone (GPT-2 124M and 1.5B parameter shapes)
#       vs PyTorch GradScaler.unscale_ + clip_grad_norm_(foreach) + AdamW
#       (foreach) and AdamW(fused=True): ms and TB/s against 30 B/param;
#   B2  MLP 3 x Linear(4096) + ReLU, batch 512, AdamW: ms/step in
#       FP32 / FP16 / BF16 vs PyTorch eager (autocast + GradScaler) and
#       torch.compile (TORCH_COMPILE=0 skips it; SKIP_TORCH=1 skips PyTorch);
#   B3  the GPT-2-small example, bf16, batch 8 x 1024: ms/step and tokens/s
#       vs PyTorch eager and torch.compile (AdamW fused in both); when it
#       fails, again on the previous CUDA paths and each newer one alone
#       (b3_paths); then, time permitting, with --pad-classes=false, with
#       AMPC_CUDA_ATTENTION_BACKWARD=fast, with --fuse-gemm-gelu, with
#       AMPC_CUDA_NORM_SUMS=inline and with AMPC_CUDA_HALF_GRADS=widen;
#   B4  FP32 sum all-reduce (NCCL, device buffers) 1..256 MiB at world
#       size 1, and at all GPUs via mpirun when there are more.
# PyTorch: medians of >= 30 steps after warm-up, timed with CUDA events on
# device-resident data. ampc: the training binary on .npy data (its loader
# and host-to-device copies included), --log-every 10, so each metrics
# record is the wall-clock mean of 10 steps with the host running ahead as
# in real training; the median of the records after step 10 (B2: 10
# records, B3: 5), counted as failed where a loss is not finite. PROFILE=1
# adds an ncu per-kernel table of one B3 step and bench/gpu/cost_vs_ncu.py's
# estimate-vs-measured table (`ampc cost`).
# Budget: < 10 minutes on an H200.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PYTHON:-python3}
START=$(date +%s)
stamp() { echo "[gpu.sh +$(( $(date +%s) - START ))s] $*"; }
die() { echo "gpu.sh: $*" >&2; exit 2; }

gpu_arch() {
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .'
  else
    echo "${AMPC_CUDA_ARCH:-90}"
  fi
}

# The programs of a prepared folder (models/ also holds the cost report).
binaries() {
  local b
  for b in "$1"/bin/* "$1"/models/* "$1"/cmp/*/train_cuda; do
    if [[ -f "$b" && -x "$b" ]]; then echo "$b"; fi
  done
}

# --- prepare: build, compile every model, train the CPU references ------------
prepare() {
  local work=$1 build=$2 arch
  set -e
  arch=$(gpu_arch)
  mkdir -p "$work"/{bin,cmp,models,res}
  work=$(cd "$work" && pwd)
  stamp "configure + build ($build, sm_$arch)"
  if [[ ! -f "$build/build.ninja" ]]; then  # packages, configure, full build
    AMPC_BUILD_DIR=$build AMPC_CUDA_ARCHS=$arch bash "$ROOT/scripts/setup.sh"
  fi
  local progs="ampc-cuda-tests ampc-device-model-tests ampc-comm-nccl-tests ampc-epilogue-bench ampc-allreduce-bench"
  ninja -C "$build" ampc $progs >"$work/build.log" || { tail -30 "$work/build.log"; exit 1; }
  local ampc=$build/bin/ampc p
  for p in $progs; do cp "$build/bin/$p" "$work/bin/"; done

  # The GPU tests of test/Targets/cuda/gpu-vs-cpu.test, prepared here.
  stamp "compile the GPU tests' models and train the CPU references"
  local cmp="$ROOT/test/Targets/cuda/Inputs/compare_targets.py"
  local arch_flag=--compile-flag=--cuda-arch=$arch
  cp "$cmp" "$work/"
  "$PY" "$cmp" "$ampc" "$ROOT/examples/mlp/mlp.mlir" "$work/cmp/mlp_fp16" --prepare-only \
    --labels label=10 --compile-flag=--amp=fp16 --compile-flag=--clip-norm=1 --steps 10 \
    $arch_flag >"$work/cmp/mlp_fp16.log"
  "$PY" "$cmp" "$ampc" "$ROOT/examples/mlp/mlp.mlir" "$work/cmp/mlp_sgd" --prepare-only \
    --labels label=10 --compile-flag=--optimizer=sgd --compile-flag=--momentum=0.9 \
    --steps 10 --loss-rtol 1e-3 --norm-rtol 1e-3 $arch_flag >"$work/cmp/mlp_sgd.log"
  "$PY" "$cmp" "$ampc" "$ROOT/examples/cnn/cnn.mlir" "$work/cmp/cnn_bf16" --prepare-only \
    --labels label=10 --compile-flag=--amp=bf16 --steps 6 $arch_flag >"$work/cmp/cnn_bf16.log"
  "$PY" "$cmp" "$ampc" "$ROOT/examples/gpt/gpt_tiny.mlir" "$work/cmp/gpt_fp16" --prepare-only \
    --labels tokens=256 --labels targets=256 --compile-flag=--amp=fp16 \
    --compile-flag=--clip-norm=1 --steps 6 $arch_flag >"$work/cmp/gpt_fp16.log"
  # 251 classes: the CUDA target pads them (graph-pad-classes), the CPU not.
  "$PY" "$ROOT/examples/gpt/gen_gpt.py" --preset tiny --vocab 251 >"$work/cmp/gpt_odd.mlir"
  "$PY" "$cmp" "$ampc" "$work/cmp/gpt_odd.mlir" "$work/cmp/gpt_odd_bf16" --prepare-only \
    --labels tokens=251 --labels targets=251 --compile-flag=--amp=bf16 \
    --steps 6 $arch_flag >"$work/cmp/gpt_odd_bf16.log"
  "$PY" "$cmp" "$ampc" "$ROOT/test/Targets/cuda/Inputs/mlp_dropout.mlir" "$work/cmp/dropout" \
    --prepare-only --labels label=10 --compile-flag=--amp=fp16 --compile-flag=--accum-steps=2 \
    --steps 8 $arch_flag >"$work/cmp/dropout.log"
  "$PY" "$cmp" "$ampc" "$ROOT/examples/mlp/mlp.mlir" "$work/cmp/scaler" --prepare-only \
    --labels label=10 --compile-flag=--amp=fp16 --run-flag=--init_scale=1e9 \
    --run-flag=--growth_interval=3 --steps 24 $arch_flag >"$work/cmp/scaler.log"
  rm -f "$work"/cmp/*/train_cpu

  stamp "compile the benchmark models"
  for amp in off fp16 bf16; do
    "$ampc" compile "$ROOT/bench/gpu/mlp4096.mlir" --target=cuda --amp=$amp \
      --cuda-arch="$arch" -o "$work/models/mlp_$amp" >/dev/null
  done
  "$ampc" compile "$ROOT/examples/gpt/gpt2_small.mlir" --target=cuda --amp=bf16 \
    --clip-norm=1 --cuda-arch="$arch" -o "$work/models/gpt2" \
    --cost-report="$work/models/gpt2_cost.json" >/dev/null
  # Without graph-pad-classes (the LM head's 50257 classes unaligned), for
  # what the padding gains.
  "$ampc" compile "$ROOT/examples/gpt/gpt2_small.mlir" --target=cuda --amp=bf16 \
    --clip-norm=1 --cuda-arch="$arch" --pad-classes=false -o "$work/models/gpt2_nopad" >/dev/null
  # The opt-in GELU GEMM epilogues (one rounding where PyTorch rounds twice).
  "$ampc" compile "$ROOT/examples/gpt/gpt2_small.mlir" --target=cuda --amp=bf16 \
    --clip-norm=1 --cuda-arch="$arch" --fuse-gemm-gelu -o "$work/models/gpt2_gelu" >/dev/null
  cp "$ROOT"/bench/gpu/*.py "$work/"

  if [[ "${BUNDLE:-0}" == 1 ]]; then
    # Everything the binaries load except the C/C++ runtime and the CUDA
    # libraries, which the GPU machine's toolkit provides.
    stamp "bundle shared libraries into $work/lib"
    mkdir -p "$work/lib"
    local skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+|libgcc_s|libcudart|libcublas|libcudnn|libnccl|libcuda\.)'
    binaries "$work" | while read -r b; do
      ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
    done | sort -u | while read -r name path; do
      [[ "$name" =~ $skip ]] || cp -L "$path" "$work/lib/$name"
    done
  fi
  # The instruction sets the CPU kernels were built for (the build's
  # AMPC_HOST_ISA_FLAGS, -mavx2 -> avx2 as /proc/cpuinfo names them): the
  # GPU tests' CPU references (ampc-cuda-tests) need them on the GPU host.
  sed -n 's/^#define AMPC_HOST_ISA_FLAGS "\(.*\)"$/\1/p' "$build/compiler/RuntimeConfig.inc" |
    tr '|' '\n' | sed -n 's/^-m\(f16c\|avx[0-9a-z]*\)$/\1/p' >"$work/isa.txt"
  # What the results are of (bench/results/gpu-*.json records it).
  { git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown; } >"$work/commit.txt"
  git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo "(with uncommitted changes)" >>"$work/commit.txt"
  stamp "prepared $work ($(du -sh "$work" | cut -f1))"
}

# --- run: GPU tests and benchmarks from a prepared folder ---------------------
# Adds folders holding CUDA libraries the binaries cannot find (toolkit
# lib64, PyTorch's nvidia-* wheels) to LD_LIBRARY_PATH.
find_libraries() {
  local work=$1 missing dirs d lib
  export LD_LIBRARY_PATH="$work/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  missing=$(binaries "$work" | while read -r b; do ldd "$b"; done |
            awk '/not found/ {print $1}' | sort -u)
  [[ -z "$missing" ]] && return 0
  dirs=$("$PY" -c 'import glob, os, site
for s in site.getsitepackages(): print("\n".join(glob.glob(os.path.join(s, "nvidia", "*", "lib"))))' 2>/dev/null)
  for lib in $missing; do
    for d in $dirs /usr/lib/x86_64-linux-gnu /usr/local/cuda*/lib*; do
      if [[ -e "$d/$lib" ]]; then
        export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
        break
      fi
    done
  done
  missing=$(binaries "$work" | while read -r b; do ldd "$b"; done |
            awk '/not found/ {print $1}' | sort -u)
  [[ -z "$missing" ]] || echo "gpu.sh: still missing: $missing" >&2
}

# Sections run in this order, most wanted first (the speed issue's numbers,
# then the correctness checks), each skipped once DEADLINE seconds (from the
# start of the script) would be passed: a lease of a few minutes still
# returns the benchmarks and whatever else fitted.
# SECTIONS="tests b3" (say) runs those, in that order.
SECTIONS=${SECTIONS:-"b3 profile b2 b1 tests b4"}
# Whether SECONDS more fit before DEADLINE; prints the skip otherwise.
fits() {
  local need=$1 what=$2 used=$(( $(date +%s) - START ))
  (( used + need <= ${DEADLINE:-1000000} )) && return 0
  echo "$what skipped: ${used}s used, ~${need}s more would pass DEADLINE=${DEADLINE}s" |
    tee -a "$res/skipped.txt"
  return 1
}

# A command's timeout: LIMIT seconds, or what is left before DEADLINE if
# less (at least 1), so a section started in time also ends in time.
budget() {
  local left=$(( ${DEADLINE:-1000000} - ($(date +%s) - START) ))
  (( left < 1 )) && left=1
  (( $1 < left )) && echo "$1" || echo "$left"
}

run() {
  local work res log gpu t
  work=$(cd "$1" && pwd)
  res=$work/res log=$work/logs
  for t in ${SECTIONS}; do
    declare -F "section_$t" >/dev/null ||
      die "SECTIONS: no section '$t' (b1 b2 b3 b4 profile tests)"
  done
  mkdir -p "$res" "$log"
  command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 ||
    die "no GPU (nvidia-smi sees none)"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  stamp "GPU: $gpu"
  echo "$gpu" >"$res/gpu.txt"
  find_libraries "$work"
  # Instruction sets of the build host (prepare's isa.txt) this CPU lacks.
  local f missing_isa=
  for f in $(cat "$work/isa.txt" 2>/dev/null); do
    grep -qw "$f" /proc/cpuinfo || missing_isa+=" $f"
  done
  # SKIP_TORCH=1 keeps PyTorch's results already in res/ (they do not
  # change with ampc's code).
  torch() {  # NAME TIMEOUT SCRIPT ARGS...: res/NAME.json
    local name=$1 limit=$2; shift 2
    [[ "${SKIP_TORCH:-0}" == 1 ]] && return 0
    timeout "$(budget "$limit")" "$PY" "$@" >"$res/$name.json" 2>"$log/$name.log" ||
      { echo "$name failed:"; tail -5 "$log/$name.log"; }
  }
  # One GPU test: NAME COMMAND...; its output goes to logs/NAME.log.
  gtest() {
    local name=$1; shift
    if timeout "$(budget "${TEST_TIMEOUT:-300}")" "$@" >"$log/$name.log" 2>&1; then
      echo "$name PASS" >>"$res/tests.txt"
    else
      echo "$name FAIL" >>"$res/tests.txt"
      echo "--- $name FAILED; the end of $log/$name.log:"; tail -25 "$log/$name.log"
    fi
  }
  local s
  for s in ${SECTIONS}; do "section_$s"; done

  stamp "results"
  { "$PY" "$work/table.py" "$res" "$gpu" --json "$res/summary.json" \
      --commit "$(head -1 "$work/commit.txt" 2>/dev/null || echo unknown)"
    cat "$res/b3_profile.txt" 2>/dev/null; } | tee "$res/table.txt"
  ! grep -q FAIL "$res/tests.txt" 2>/dev/null
}

# The benchmarks' random inputs, made once.
data() { [[ -f "$work/models/targets.npy" ]] || "$PY" "$work/make_data.py" "$work/models"; }

section_tests() {
  [[ "${SKIP_TESTS:-0}" != 1 ]] || return 0
  fits 120 "GPU tests" || return 0
  stamp "GPU tests"
  : >"$res/tests.txt"
  # ampc-cuda-tests checks against the CPU kernels, built for the build
  # host's instruction sets: on a CPU without one of them it would stop on
  # an illegal instruction, so it is skipped (and named) there.
  [[ -z "$missing_isa" ]] ||
    echo "this CPU lacks$missing_isa, which the build host's CPU kernels use: ampc-cuda-tests skipped"
  cuda_tests() {  # NAME ARGS...: ampc-cuda-tests under gtest()
    local name=$1; shift
    if [[ -n "$missing_isa" ]]; then echo "$name SKIP" >>"$res/tests.txt"; return; fi
    gtest "$name" "$@"
  }
  cuda_tests cuda-kernels "$work/bin/ampc-cuda-tests"
  gtest device-model "$work/bin/ampc-device-model-tests"
  gtest nccl "$work/bin/ampc-comm-nccl-tests"
  # The same conv2d checks on the im2col path (cuDNN's fallback).
  cuda_tests cuda-kernels-im2col env AMPC_CUDA_CONV=im2col \
    "$work/bin/ampc-cuda-tests" --gtest_filter='CudaKernels.Conv2d*'
  # The previous norm kernels and the element-wise epilogue (A/B: what a
  # failure of the fused/packed ones is compared with).
  cuda_tests cuda-norm-rows env AMPC_CUDA_NORM=rows "$work/bin/ampc-cuda-tests" \
    --gtest_filter='CudaKernels.SoftmaxAndLayerNorm:CudaKernels.NormBackward*'
  # The fused backward's column sums inline at every width (split is the
  # default from rows of 513).
  cuda_tests cuda-norm-inline env AMPC_CUDA_NORM_SUMS=inline "$work/bin/ampc-cuda-tests" \
    --gtest_filter='CudaKernels.SoftmaxAndLayerNorm:CudaKernels.NormBackward*'
  cuda_tests cuda-epilogue-scalar env AMPC_CUDA_EPILOGUE=scalar \
    "$work/bin/ampc-cuda-tests" --gtest_filter='CudaEpilogue.AdamW*:CudaEpilogue.Halts*:CudaEpilogue.PerTensor*'
  for t in "$work"/cmp/*/; do
    t=${t%/}
    [[ -d "$t" ]] || continue
    gtest "gpu-vs-cpu.$(basename "$t")" "$PY" "$work/compare_targets.py" --run-only "$t"
  done
  # Resume is bitwise (test/Targets/cuda/gpu-resume.test, on this data).
  gtest gpu-resume bash -c 'cd "$1/cmp/mlp_fp16" && d=image=image.npy,label=label.npy &&
    rm -rf ck-full ck-split &&
    ./train_cuda --data $d --steps 8 --checkpoint-dir ck-full >/dev/null &&
    ./train_cuda --data $d --steps 4 --checkpoint-dir ck-split >/dev/null &&
    ./train_cuda --data $d --steps 8 --resume ck-split --checkpoint-dir ck-split >/dev/null &&
    cmp ck-full/step-00000008/model.safetensors ck-split/step-00000008/model.safetensors &&
    cmp ck-full/step-00000008/train_state.json ck-split/step-00000008/train_state.json' _ "$work"
  grep -c PASS "$res/tests.txt" | sed 's/$/ GPU tests passed/'
}

section_b1() {
  fits 90 "B1" || return 0
  stamp "B1 epilogue (ampc, PyTorch)"
  local p
  for p in 124m 1.5b; do
    timeout "$(budget 120)" "$work/bin/ampc-epilogue-bench" $p >"$res/b1_ampc_$p.json" 2>"$log/b1_ampc_$p.log" ||
      { echo "B1 ampc $p failed:"; tail -5 "$log/b1_ampc_$p.log"; }
    torch b1_torch_$p 300 "$work/b1_torch.py" $p
  done
}

# run_ampc NAME LIMIT MODEL DATA STEPS EVERY trains MODEL on DATA for STEPS
# steps, logging every EVERY (RUN_ENV: VAR=VALUE words for its
# environment), its metrics to res/NAME.jsonl and its output to
# logs/NAME.log.
run_ampc() {
  local name=$1 limit=$2 model=$3 data=$4 steps=$5 every=$6
  timeout "$(budget "$limit")" env ${RUN_ENV:-} "$model" --data "$data" --steps "$steps" \
    --log-every "$every" --metrics "$res/$name.jsonl" >"$log/$name.log" 2>&1
}

# One timed ampc run: time_ampc NAME LIMIT MODEL DATA STEPS is run_ampc
# with --log-every 10, and writes the median step time to res/NAME.txt. A
# run that fails, or whose loss is not finite (median_step.py), writes no
# NAME.txt.
time_ampc() {
  local name=$1
  rm -f "$res/$name.txt"
  if run_ampc "$@" 10 &&
     "$PY" "$work/median_step.py" "$res/$name.jsonl" >"$res/$name.tmp" 2>>"$log/$name.log"; then
    mv "$res/$name.tmp" "$res/$name.txt"
  else
    rm -f "$res/$name.tmp"
    echo "$name failed:"; tail -5 "$log/$name.log"
    return 1
  fi
}

section_b2() {
  fits 120 "B2" || return 0
  stamp "B2 MLP (ampc, PyTorch)"
  local amp
  data
  for amp in off fp16 bf16; do
    time_ampc b2_ampc_$amp 120 "$work/models/mlp_$amp" \
      "x=$work/models/x.npy,label=$work/models/label.npy" 110
  done
  torch b2_torch 400 "$work/b2_torch.py"
}

# The runtime's switches that put each newer CUDA path back on the one it
# replaced (docs/RUNTIME.md): what B3 runs with when it fails as built.
SAFE_PATHS="AMPC_CUDA_ATTENTION=math AMPC_CUDA_PACKED_ATTENTION=copies AMPC_CUDA_NORM_SUMS=inline
  AMPC_CUDA_ATTENTION_STATS=recompute AMPC_CUDA_NORM=rows
  AMPC_CUDA_FUSED_RESIDUAL_NORM=off AMPC_CUDA_EPILOGUE=scalar
  AMPC_CUDA_CE_BACKWARD=rows AMPC_CUDA_CROSS_ENTROPY=separate AMPC_CUDA_CE_ROWS=elements
  AMPC_CUDA_GEMM_BGRAD=separate AMPC_CUDA_GEMM_GELU=separate AMPC_CUDA_CONCAT=copies
  AMPC_CUDA_HALF_GRADS=widen"

section_b3() {
  fits 150 "B3" || return 0
  stamp "B3 GPT-2 small (ampc, PyTorch)"
  data
  local tokens="tokens=$work/models/tokens.npy,targets=$work/models/targets.npy"
  time_ampc b3_ampc 300 "$work/models/gpt2" "$tokens" 60 || b3_paths "$tokens"
  torch b3_torch 300 "$work/b3_torch.py"
  # Then the same step in variants, as long as there is time for them.
  [[ -x "$work/models/gpt2_nopad" ]] && fits 60 "B3 --pad-classes=false" || return 0
  time_ampc b3_ampc_nopad 120 "$work/models/gpt2_nopad" "$tokens" 60
  # Attention's non-deterministic backward (a run-time switch).
  fits 60 "B3 AMPC_CUDA_ATTENTION_BACKWARD=fast" || return 0
  RUN_ENV=AMPC_CUDA_ATTENTION_BACKWARD=fast \
    time_ampc b3_ampc_fastbwd 120 "$work/models/gpt2" "$tokens" 60
  [[ -x "$work/models/gpt2_gelu" ]] && fits 60 "B3 --fuse-gemm-gelu" || return 0
  time_ampc b3_ampc_gelu 120 "$work/models/gpt2_gelu" "$tokens" 60
  # The layer norms' column sums in the backward kernel's registers (the
  # default before NormSums::Auto split them for rows of 768).
  fits 60 "B3 AMPC_CUDA_NORM_SUMS=inline" || return 0
  RUN_ENV=AMPC_CUDA_NORM_SUMS=inline \
    time_ampc b3_ampc_inline_sums 120 "$work/models/gpt2" "$tokens" 60
  # The half weight gradients widened as they are stored (what the casts
  # before train-half-grads cost), against the epilogue reading them.
  fits 60 "B3 AMPC_CUDA_HALF_GRADS=widen" || return 0
  RUN_ENV=AMPC_CUDA_HALF_GRADS=widen \
    time_ampc b3_ampc_widen 120 "$work/models/gpt2" "$tokens" 60
}

# B3 failed as built. One GPU run may be all there is, so it still yields a
# time and names the culprit: B3 again with every path in SAFE_PATHS put
# back (res/b3_ampc_safe.txt), then, on top of that, each newer path alone
# for 3 steps (graph capture and a replay): res/b3_paths.txt says PASS or
# FAIL for each.
b3_paths() {
  local tokens=$1 s o var others
  fits 60 "B3 on the previous paths" || return 0
  stamp "B3 failed: again on the previous CUDA paths"
  RUN_ENV="$SAFE_PATHS" time_ampc b3_ampc_safe 300 "$work/models/gpt2" "$tokens" 60 || return 0
  : >"$res/b3_paths.txt"
  for s in $SAFE_PATHS; do
    var=${s%%=*} others=""
    fits 20 "B3 with $var unset" || break
    for o in $SAFE_PATHS; do [[ "$o" == "$s" ]] || others+=" $o"; done
    if RUN_ENV="$others" run_ampc "b3_path_$var" 60 "$work/models/gpt2" "$tokens" 3 1 &&
       "$PY" "$work/median_step.py" "$res/b3_path_$var.jsonl" --check 2>>"$log/b3_path_$var.log"; then
      echo "$var PASS"
    else
      echo "$var FAIL"
    fi >>"$res/b3_paths.txt"
  done
  cat "$res/b3_paths.txt"
}

# ncu on the PATH, else where the CUDA toolkit or Nsight Compute keeps it.
find_ncu() {
  command -v ncu && return 0
  ls -d /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1 | grep .
}

section_profile() {
  [[ "${PROFILE:-0}" == 1 ]] || return 0
  local ncu costdev
  ncu=$(find_ncu) || { echo "B3 profile skipped: no ncu found"; return 0; }
  fits 120 "B3 profile" || return 0
  stamp "B3 per-kernel profile (ncu, one step)"
  data
  timeout "$(budget 300)" "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv \
    "$work/models/gpt2" --data "tokens=$work/models/tokens.npy,targets=$work/models/targets.npy" \
    --steps 1 --log-every 1 >"$log/b3_ncu.csv" 2>&1 &&
    "$PY" "$work/ncu_table.py" "$log/b3_ncu.csv" 20 >"$res/b3_profile.txt" ||
    { echo "B3 profile failed:"; tail -5 "$log/b3_ncu.csv"; }
  # The cost report's estimate beside each measured kernel, priced on
  # this GPU where the device table has it.
  case "$gpu" in
    *H200*) costdev=h200 ;; *H100*) costdev=h100 ;; *A100*) costdev=a100 ;; *) costdev="" ;;
  esac
  [[ -f "$work/models/gpt2_cost.json" && -f "$log/b3_ncu.csv" ]] &&
    "$PY" "$work/cost_vs_ncu.py" "$work/models/gpt2_cost.json" "$log/b3_ncu.csv" \
      --top 25 ${costdev:+--device "$costdev"} >"$res/b3_cost_vs_ncu.txt" 2>&1 ||
    echo "B3 cost vs ncu failed (see $res/b3_cost_vs_ncu.txt)"
}

section_b4() {
  fits 60 "B4" || return 0
  stamp "B4 all-reduce"
  local ngpu sizes=1M,4M,16M,64M,256M
  ngpu=$(nvidia-smi -L | wc -l)
  timeout "$(budget 120)" "$work/bin/ampc-allreduce-bench" --gpu --sizes=$sizes --iters=30 \
    >"$res/b4_1.txt" 2>"$log/b4.log" || { echo "B4 failed:"; tail -5 "$log/b4.log"; }
  if (( ngpu > 1 )); then
    timeout "$(budget 300)" mpirun --allow-run-as-root -np "$ngpu" "$work/bin/ampc-allreduce-bench" --gpu \
      --sizes=$sizes --iters=30 >"$res/b4_$ngpu.txt" 2>>"$log/b4.log"
  fi
}

# --- check: the GPU run's dumped first steps vs the reference interpreter ----
check() {
  local work=$1 build=$2 t model amp tol fails=0
  # Brought up to date where BUILD_DIR is a build folder.
  [[ ! -f "$build/build.ninja" ]] || ninja -C "$build" ampc-stepcheck >/dev/null
  for t in "$work"/cmp/*/; do
    [[ -f "$t/step1.st" ]] || continue
    read -r model amp < <("$PY" -c 'import json, sys
j = json.load(open(sys.argv[1])); print(j["model_path"], j["amp"])' "$t/job.json")
    # The e2e tests' tolerances (test/e2e/examples-*.test), FP32 loosened
    # for FMA and cuBLASLt's summation order.
    case $amp in
      off)  tol="--loss-tol=1e-5 --grad-tol=5e-3 --step-tol=5e-3" ;;
      fp16) tol="--loss-tol=1e-4 --grad-tol=1e-2 --step-tol=1e-2" ;;
      *)    tol="--loss-tol=1e-3 --grad-tol=2e-2 --step-tol=2e-2" ;;
    esac
    echo "== $(basename "$t") ($amp)"
    "$build/bin/ampc-stepcheck" "$model" "$t/step1.st" --amp="$amp" $tol \
      --epilogue-tol=2e-6 || fails=$((fails + 1))
  done
  echo "stepcheck: $fails failed"
  (( fails == 0 ))
}

# --- pack / collect: a prepared folder to a GPU machine and its results back --
# pack WORK TARBALL: WORK (prepared with BUNDLE=1) as one .tar.xz. The
# compiled models share the runtime, and xz's 64 MiB window finds the
# repeats: about 130 MB packs to about 12 MB.
pack() {
  local work=$1 tarball=$2 limit=${PACK_LIMIT_MIB:-60} size
  [[ -f "$work/commit.txt" ]] || die "$work is not prepared (bench/gpu.sh prepare)"
  [[ -d "$work/lib" ]] || echo "gpu.sh: $work has no lib/ (prepare with BUNDLE=1 for a machine with only CUDA and PyTorch)" >&2
  mkdir -p "$(dirname "$tarball")"
  stamp "pack $work -> $tarball"
  # Not an earlier run's results: device_run.sh reads a summary it finds
  # there as this run's.
  local name
  name=$(basename "$work")
  tar -C "$(dirname "$work")" --exclude="$name/res" --exclude="$name/logs" -cf - "$name" |
    xz -9 -T1 >"$tarball" || die "tar/xz failed"
  size=$(( $(stat -c %s "$tarball") / 1048576 ))
  stamp "packed: ${size} MiB"
  (( size <= limit )) || die "$tarball is ${size} MiB, over PACK_LIMIT_MIB=$limit"
}

# collect RESULTS WORK [BUILD_DIR]: device_run.sh's results.tar.gz unpacked
# over WORK, the dumped first steps checked (check), and res/summary.json
# (with the check's verdict) copied to bench/results/gpu-DATE.json.
collect() {
  local results=$1 work=$2 build=$3 day dest verdict=passed
  [[ -d "$work" ]] || die "$work does not exist (the folder prepare made)"
  tar -C "$work" -xzf "$results" || die "cannot unpack $results"
  [[ -f "$work/res/summary.json" ]] || die "$results holds no res/summary.json"
  check "$work" "$build" | tee "$work/res/stepcheck.txt" || verdict=failed
  grep -q '^== ' "$work/res/stepcheck.txt" || verdict="not run (no dumped steps)"
  day=$("$PY" -c 'import json, sys
print(json.load(open(sys.argv[1]))["date"][:10].replace("-", ""))' "$work/res/summary.json")
  dest=${AMPC_RESULTS_DIR:-$ROOT/bench/results}/gpu-$day.json
  mkdir -p "$(dirname "$dest")"
  "$PY" - "$work/res/summary.json" "$dest" "$verdict" <<'PY' || die "cannot write $dest"
import json, sys
s = json.load(open(sys.argv[1]))
s["stepcheck"] = sys.argv[3]
with open(sys.argv[2], "w") as f:
    json.dump(s, f, indent=1)
    f.write("\n")
PY
  cat "$work/res/table.txt"
  stamp "stepcheck $verdict; wrote $dest"
}

case "${1:-}" in
  check)   [[ $# -ge 2 ]] || die "usage: bench/gpu.sh check WORK [BUILD_DIR]"
           check "$2" "${3:-$ROOT/build-gpu}" ;;
  prepare) [[ $# -ge 2 ]] || die "usage: bench/gpu.sh prepare WORK [BUILD_DIR]"
           prepare "$2" "${3:-$ROOT/build-gpu}" ;;
  run)     [[ $# -eq 2 ]] || die "usage: bench/gpu.sh run WORK"
           run "$2" ;;
  pack)    [[ $# -eq 3 ]] || die "usage: bench/gpu.sh pack WORK TARBALL"
           pack "$2" "$3" ;;
  collect) [[ $# -ge 3 ]] || die "usage: bench/gpu.sh collect RESULTS.tar.gz WORK [BUILD_DIR]"
           collect "$2" "$3" "${4:-$ROOT/build-gpu}" ;;
  -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' ;;
  *)       build=${1:-$ROOT/build-gpu}
           prepare "$build/gpu-bench" "$build" && run "$build/gpu-bench" &&
             check "$build/gpu-bench" "$build" ;;
esac

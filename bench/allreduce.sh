#!/usr/bin/env bash
# bench/allreduce.sh - FP32 sum all-reduce on the CPU target (MPI, host
# buffers) at 2 ranks: time, algbw and busbw (nccl-tests' definition) for the
# bucketed gradient all-reduce (GradBucketer, 25 MiB buckets) and one raw
# Communicator::allreduceSum. Median of ITERS iterations after warm-up.
#
#   bench/allreduce.sh [BUILD_DIR] [-- extra ampc-allreduce-bench flags]
#   env: NP (2), SIZES (1M,4M,16M,64M; SIZES=4 times the latency), ITERS (20)
# On GPUs, bench/gpu.sh (B4) runs the same binary with --gpu (NCCL).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$ROOT/build}
shift $(( $# > 0 ? 1 : 0 ))
[[ "${1:-}" == "--" ]] && shift
if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$BUILD" ampc-allreduce-bench >/dev/null
echo "host: $(nproc) CPU(s), $(mpirun --version 2>/dev/null | head -1)"
mpirun --allow-run-as-root --oversubscribe -np "${NP:-2}" \
  "$BUILD/bin/ampc-allreduce-bench" --sizes="${SIZES:-1M,4M,16M,64M}" \
  --iters="${ITERS:-20}" "$@"

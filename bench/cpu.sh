#!/usr/bin/env bash
# CPU benchmark of the compiler and of the generated code:
#   - `ampc compile` wall time per example (lowering + the host C++ compiler);
#   - the mlp example's training step time at --amp=off, fp16 and bf16: the
#     median of step_time_ms over STEPS steps logged one by one (the first
#     WARMUP steps left out), on Fashion-MNIST.
# Usage: bench/cpu.sh [BUILD_DIR] [STEPS] [WARMUP]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
steps=${2:-200}
warmup=${3:-10}
ampc=$build/bin/ampc
fm=/usr/share/datasets/fashion-mnist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
median() { # FILE FIELD SKIP
  python3 - "$@" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
steps = [r for r in rows if "loss" in r][int(sys.argv[3]):]
v = sorted(r[sys.argv[2]] for r in steps)
n = len(v)
print("%.3f" % (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2))
PY
}

echo "ampc CPU benchmark: $(nproc) cores, $(uname -m), $(c++ --version | head -1)"
printf '%-34s %12s\n' "what" "result"
for ex in mlp/mlp cnn/cnn gpt/gpt_tiny; do
  t0=$(now)
  "$ampc" compile "$root/examples/$ex.mlir" -o "$work/$(basename $ex)" > /dev/null
  t1=$(now)
  printf '%-34s %10.2f s\n' "compile $(basename $ex) (--amp=off)" \
    "$(awk "BEGIN { print $t1 - $t0 }")"
done
for amp in off fp16 bf16; do
  "$ampc" compile "$root/examples/mlp/mlp.mlir" -o "$work/mlp-$amp" \
    --amp=$amp > /dev/null
  "$work/mlp-$amp" --data "image=$fm/train-images-idx3-ubyte.gz,label=$fm/train-labels-idx1-ubyte.gz" \
    --steps "$steps" --log-every 1 --metrics "$work/$amp.jsonl" > /dev/null
  printf '%-34s %9s ms\n' "mlp step, batch 128, --amp=$amp" \
    "$(median "$work/$amp.jsonl" step_time_ms "$warmup")"
done

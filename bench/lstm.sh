#!/usr/bin/env bash
# An imported recurrent model on the CPU target beside PyTorch eager: the
# LSTM language model of bench/lstm/lstm_lm.py (nn.Embedding(1000, 200), a
# two-layer nn.LSTM(200, 200) over 35 steps, batch 20, a Linear head),
# exported by PyTorch, imported (LSTM unrolled over the steps), compiled in
# FP32; the median training step of each (AdamW, clip-norm 1) with THREADS
# threads, and the import and compile times. Needs PyTorch (TORCH_PYTHON,
# else the build's venv: AMPC_WITH_TORCH=1 scripts/setup.sh). The table goes
# to stdout, a JSON of it to bench/results/lstm-DATE.json (RESULTS=FILE to
# choose; RESULTS= to skip).
# Usage: [THREADS=1] [TORCH_PYTHON=python] bench/lstm.sh [BUILD_DIR] [STEPS] [WARMUP]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
steps=${2:-60}
warmup=${3:-10}
threads=${THREADS:-1}
ampc=$build/bin/ampc
torch_py=${TORCH_PYTHON:-$build/pyenv/bin/python}
results=${RESULTS-$root/bench/results/lstm-$(date +%Y%m%d).json}
if ! "$torch_py" -c 'import torch, onnx' 2>/dev/null; then
  echo "bench/lstm.sh: $torch_py cannot import torch and onnx (set TORCH_PYTHON)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
now() { date +%s.%N; }

"$torch_py" "$root/bench/lstm/lstm_lm.py" export "$work" 2>/dev/null
t0=$(now)
"$ampc" import "$work/model.onnx" --loss=cross_entropy:logits,label \
  -o "$work/lm.mlir" --weights "$work/lm.safetensors"
t1=$(now)
"$ampc" compile "$work/lm.mlir" -o "$work/lm" > /dev/null
t2=$(now)
"$work/lm" --data "x=$work/x.npy,label=$work/label.npy" --steps "$steps" \
  --log-every 1 --metrics "$work/m.jsonl" > /dev/null
ampc_ms=$(python3 - "$work/m.jsonl" "$warmup" <<'PY'
import json, sys
v = sorted(json.loads(l)["step_time_ms"] for l in open(sys.argv[1])
           if '"loss"' in l)[int(sys.argv[2]):]
print("%.3f" % v[len(v) // 2])
PY
)
torch_ms=$("$torch_py" "$root/bench/lstm/lstm_lm.py" time "$steps" "$warmup")
import_s=$(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }")
compile_s=$(awk "BEGIN { printf \"%.1f\", $t2 - $t1 }")
ratio=$(awk "BEGIN { printf \"%.2f\", $ampc_ms / $torch_ms }")
echo "LSTM LM (2 x LSTM(200), 35 steps, batch 20), FP32, $threads thread(s)"
printf '%-28s %10s\n' "ampc import" "$import_s s" "ampc compile" "$compile_s s" \
  "ampc step (median)" "$ampc_ms ms" "PyTorch eager step" "$torch_ms ms" \
  "ratio ampc / PyTorch" "$ratio"
if [ -n "$results" ]; then
  mkdir -p "$(dirname "$results")"
  cat > "$results" <<JSON
{"bench": "lstm", "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "commit": "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)",
 "cpu": "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')",
 "threads": $threads, "steps": $steps, "warmup": $warmup,
 "torch": "$("$torch_py" -c 'import torch; print(torch.__version__)')",
 "load_average": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "import_s": $import_s, "compile_s": $compile_s,
 "ampc_ms": $ampc_ms, "torch_ms": $torch_ms, "ratio": $ratio}
JSON
  echo "wrote $results"
fi

#!/usr/bin/env bash
# CPU benchmark of the compiler and of the generated code, side by side with
# PyTorch eager where PyTorch is installed:
#   - `ampc compile` wall time per example (lowering + the host C++ compiler);
#   - the training step time of examples mlp, cnn and gpt_tiny at --amp=off,
#     fp16 and bf16: ampc's median step_time_ms over STEPS steps logged one
#     by one (the first WARMUP left out), on Fashion-MNIST / fortunes text,
#     and bench/cpu/torch_step.py's median for the same nn.Module, shapes,
#     AdamW and CPU autocast (+ GradScaler for fp16); ratio = ampc / PyTorch.
#     Beside the wall times, the CPU time (user + sys) per step of each,
#     which a machine shared with other work disturbs less.
# Both run with THREADS threads (OpenBLAS for ampc, torch.set_num_threads).
# The table goes to stdout and a JSON of it to bench/results/cpu-DATE.json
# (RESULTS=FILE to choose; RESULTS= to skip).
# Usage: [THREADS=1] [TORCH_PYTHON=python] bench/cpu.sh [BUILD_DIR] [STEPS] [WARMUP]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
steps=${2:-100}
warmup=${3:-10}
threads=${THREADS:-1}
ampc=$build/bin/ampc
fm=/usr/share/datasets/fashion-mnist
fortunes=/usr/share/games/fortunes
results=${RESULTS-$root/bench/results/cpu-$(date +%Y%m%d).json}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# PyTorch: TORCH_PYTHON, else the build's venv (scripts/setup.sh with
# AMPC_WITH_TORCH=1 installs it there), else none.
torch_py=${TORCH_PYTHON:-$build/pyenv/bin/python}
if ! "$torch_py" -c 'import torch' 2>/dev/null; then
  echo "PyTorch not importable by $torch_py: ampc column only" >&2
  torch_py=
fi

now() { date +%s.%N; }
median() { # FILE SKIP
  python3 - "$@" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
v = sorted([r["step_time_ms"] for r in rows if "loss" in r][int(sys.argv[2]):])
n = len(v)
print("%.3f" % (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2))
PY
}

cores=$(nproc)  # before OMP_NUM_THREADS, which nproc obeys
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
echo "ampc CPU benchmark: $cores cores, $(uname -m), $(c++ --version | head -1), $threads thread(s)"
echo "  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
printf '%-34s %12s\n' "what" "result"
for ex in mlp/mlp cnn/cnn gpt/gpt_tiny; do
  t0=$(now)
  "$ampc" compile "$root/examples/$ex.mlir" -o "$work/$(basename $ex)" > /dev/null
  t1=$(now)
  printf '%-34s %10.2f s\n' "compile $(basename $ex) (--amp=off)" \
    "$(awk "BEGIN { print $t1 - $t0 }")"
done

images="image=$fm/train-images-idx3-ubyte.gz,label=$fm/train-labels-idx1-ubyte.gz"
cat $fortunes/{computers,science} > "$work/text.txt"
declare -A data=([mlp]=$images [cnn]=$images [gpt_tiny]="tokens=$work/text.txt")
declare -A file=([mlp]=mlp/mlp [cnn]=cnn/cnn [gpt_tiny]=gpt/gpt_tiny)

# CPU seconds (user + sys, all threads) of a command; its output is dropped.
cpu_seconds() {
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" > /dev/null
  awk '{ print $1 + $2 }' "$work/time"
}

echo
echo "ms: median wall time of a step; cpu: CPU time (user + sys) per step,"
echo "which other load on the machine disturbs less"
printf '%-9s %-5s %10s %10s %8s %10s %10s %8s\n' model amp "ampc ms" "torch ms" ratio \
  "ampc cpu" "torch cpu" "ratio"
rows=()
for model in mlp cnn gpt_tiny; do
  for amp in off fp16 bf16; do
    bin=$work/$model-$amp
    "$ampc" compile "$root/examples/${file[$model]}.mlir" -o "$bin" --amp=$amp > /dev/null
    # CPU time per step: a run of warmup + steps less one of warmup only,
    # so start-up (data loading) and the warm-up steps cancel out.
    c1=$(cpu_seconds "$bin" --data "${data[$model]}" --steps $((steps + warmup)) \
      --log-every 1 --metrics "$work/$model-$amp.jsonl")
    c0=$(cpu_seconds "$bin" --data "${data[$model]}" --steps "$warmup" --log-every 1000)
    a=$(median "$work/$model-$amp.jsonl" "$warmup")
    ac=$(awk "BEGIN { printf \"%.3f\", ($c1 - $c0) * 1000 / $steps }")
    t=null ratio=null tc=null cratio=null
    if [[ -n "$torch_py" ]]; then
      read -r t tc < <("$torch_py" "$root/bench/cpu/torch_step.py" $model $amp "$threads" "$steps" "$warmup" |
          python3 -c 'import json,sys; r = json.load(sys.stdin); print("%.3f %.3f" % (r["ms"], r["cpu_ms"]))')
      ratio=$(awk "BEGIN { printf \"%.2f\", $a / $t }")
      cratio=$(awk "BEGIN { printf \"%.2f\", $ac / $tc }")
    fi
    printf '%-9s %-5s %10s %10s %8s %10s %10s %8s\n' $model $amp "$a" "$t" "$ratio" "$ac" "$tc" "$cratio"
    rows+=("{\"model\": \"$model\", \"amp\": \"$amp\", \"ampc_ms\": $a, \"torch_ms\": $t, \"ratio\": $ratio, \"ampc_cpu_ms\": $ac, \"torch_cpu_ms\": $tc, \"cpu_ratio\": $cratio}")
  done
done

if [[ -n "$results" ]]; then
  mkdir -p "$(dirname "$results")"
  torch_version=null
  [[ -n "$torch_py" ]] && torch_version="\"$("$torch_py" -c 'import torch; print(torch.__version__)')\""
  {
    echo "{\"bench\": \"cpu\", \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
    echo " \"commit\": \"$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)\","
    echo " \"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')\","
    echo " \"cores\": $cores, \"threads\": $threads, \"steps\": $steps, \"warmup\": $warmup,"
    echo " \"torch\": $torch_version, \"load_average\": \"$(cut -d' ' -f1-3 /proc/loadavg)\","
    echo " \"rows\": ["
    (IFS=$'\n'; echo "${rows[*]}") | sed '$!s/$/,/; s/^/  /'
    echo " ]}"
  } > "$results"
  python3 -m json.tool "$results" > /dev/null
  echo "results: $results"
fi

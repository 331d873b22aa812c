#!/usr/bin/env bash
# The resnet example's accuracy benchmark (issue 13): examples/resnet trained
# on Fashion-MNIST with fp16 AMP on the CPU target (Adam(W) lr LR, cosine
# schedule), evaluated after training over all 10000 test samples (on the
# running statistics, as model.eval()). Prints the test accuracy and the wall
# time, and writes bench/results/resnet-DATE.json (RESULTS=FILE to choose,
# RESULTS= to skip). Target: >= 0.92.
# Usage: [EPOCHS=8] [LR=3e-3] [THREADS=2] bench/resnet.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
epochs=${EPOCHS:-8}
lr=${LR:-3e-3}
threads=${THREADS:-2}
fm=/usr/share/datasets/fashion-mnist
results=${RESULTS-$root/bench/results/resnet-$(date +%Y%m%d).json}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cores=$(nproc)
export OPENBLAS_NUM_THREADS=$threads

"$build/bin/ampc" compile "$root/examples/resnet/resnet.mlir" -o "$work/resnet" --amp=fp16 >/dev/null
t0=$(date +%s.%N)
"$work/resnet" --data "image=$fm/train-images-idx3-ubyte.gz,label=$fm/train-labels-idx1-ubyte.gz" \
  --eval "image=$fm/t10k-images-idx3-ubyte.gz,label=$fm/t10k-labels-idx1-ubyte.gz" \
  --epochs "$epochs" --lr "$lr" --lr-schedule cosine --log-every 100 \
  --metrics "$work/m.jsonl" | grep -E "^eval|^done"
t1=$(date +%s.%N)
python3 - "$work/m.jsonl" "$t0" "$t1" "$results" "$epochs" "$lr" "$threads" "$cores" \
  "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY'
import json, sys
m, t0, t1, out, epochs, lr, threads, cores, commit = sys.argv[1:]
rows = [json.loads(l) for l in open(m)]
ev = [r for r in rows if "eval_accuracy" in r]
acc = [round(r["eval_accuracy"], 4) for r in ev]
wall = float(t1) - float(t0)
print("final accuracy %.4f over %d samples, %.0f s wall (%s)" % (
    acc[-1], ev[-1].get("eval_samples", 0), wall, "reached 0.92" if acc[-1] >= 0.92 else "below 0.92"))
if out:
    import datetime, os
    os.makedirs(os.path.dirname(out), exist_ok=True)
    json.dump({"bench": "resnet", "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
               "commit": commit, "amp": "fp16", "epochs": int(epochs), "lr": float(lr),
               "threads": int(threads), "cores": int(cores), "final_accuracy": acc[-1], "eval_samples": ev[-1].get("eval_samples"),
               "wall_s": round(wall, 1), "load_average": open("/proc/loadavg").read().split()[:3]},
              open(out, "w"), indent=1)
    print("results:", out)
PY

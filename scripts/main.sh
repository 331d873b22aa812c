#!/usr/bin/env bash
# The main job: set up and build ampc, compile the MLP example with FP16
# automatic mixed precision, train it on Fashion-MNIST (from the Debian
# package), evaluate on the test set, and leave metrics and a checkpoint in
# out/mlp/. Uses the CUDA target when nvidia-smi sees a GPU and ampc was
# built with it, else the CPU target.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Only the compiler and the runtime it links: the tests build with
# scripts/test.sh.
"$ROOT/scripts/setup.sh" ampc
BIN=${AMPC_BUILD_DIR:-$ROOT/build}/bin
OUT=$ROOT/out/mlp
DATA=/usr/share/datasets/fashion-mnist
EPOCHS=${EPOCHS:-5}
mkdir -p "$OUT"

TARGET=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
   "$BIN/ampc" compile --help 2>/dev/null | grep -q -- "or cuda"; then
  TARGET=cuda
fi

echo
echo "== ampc compile examples/mlp/mlp.mlir --amp=fp16 --target=$TARGET"
"$BIN/ampc" compile "$ROOT/examples/mlp/mlp.mlir" -o "$OUT/train" \
  --amp=fp16 --optimizer=adamw --target="$TARGET"

echo
echo "== training on Fashion-MNIST ($EPOCHS epochs)"
rm -rf "$OUT/checkpoints"
"$OUT/train" \
  --data "image=$DATA/train-images-idx3-ubyte.gz,label=$DATA/train-labels-idx1-ubyte.gz" \
  --eval "image=$DATA/t10k-images-idx3-ubyte.gz,label=$DATA/t10k-labels-idx1-ubyte.gz" \
  --epochs "$EPOCHS" --lr-schedule cosine --log-every 100 \
  --metrics "$OUT/metrics.jsonl" --checkpoint-dir "$OUT/checkpoints"

echo
echo "metrics:    ${OUT#$ROOT/}/metrics.jsonl"
echo "checkpoint: ${OUT#$ROOT/}/checkpoints/$(cat "$OUT/checkpoints/latest" 2>/dev/null || echo '?')"

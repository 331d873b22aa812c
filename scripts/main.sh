#!/usr/bin/env bash
# The main job: set up, build, and run ampc on the examples.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/setup.sh"
BIN=${AMPC_BUILD_DIR:-$ROOT/build}/bin

for model in "$ROOT"/examples/*/*.mlir; do
  echo
  echo "== ampc check ${model#$ROOT/}"
  "$BIN/ampc" check "$model"
done

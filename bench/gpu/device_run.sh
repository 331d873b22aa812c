#!/usr/bin/env bash
# bench/gpu/device_run.sh - the GPU half of bench/gpu.sh on a machine that
# gets only this repository and one packed folder (`bench/gpu.sh pack`):
# unpacks it, runs `bench/gpu.sh run` with a deadline, and packs what came
# out into OUT even when the run failed or was cut short.
#
#   bench/gpu/device_run.sh TARBALL [OUT]     (OUT defaults to $OUT)
#
# OUT receives results.tar.gz (res/, logs/ and the GPU tests' dumped steps,
# for `bench/gpu.sh collect` back on the build host), table.txt and
# run.log. DEADLINE (default 480 s) bounds the sections gpu.sh starts, so a
# 10-minute command limit leaves time to pack; PROFILE defaults to 1;
# SECTIONS picks and orders the sections (bench/gpu.sh).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tarball=${1:?usage: device_run.sh TARBALL [OUT]}
out=${2:-${OUT:?OUT is not set; pass a folder}}
scratch=${SCRATCH:-/tmp/ampc-gpu}
mkdir -p "$out"

# Python's tarfile reads .tar.xz where no xz program is installed.
rm -rf "$scratch" && mkdir -p "$scratch"
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
  "$tarball" "$scratch" || { echo "device_run: cannot unpack $tarball" >&2; exit 2; }
work=$(find "$scratch" -mindepth 1 -maxdepth 1 -type d | head -1)
[[ -f "$work/commit.txt" ]] || { echo "device_run: $tarball is no prepared folder" >&2; exit 2; }

deadline=${DEADLINE:-480}
# gpu.sh bounds each command by the deadline; the outer timeout is a net
# that still leaves time to pack inside a 10-minute call.
DEADLINE=$deadline PROFILE=${PROFILE:-1} timeout $((deadline + 40)) \
  bash "$ROOT/bench/gpu.sh" run "$work" 2>&1 | tee "$out/run.log"
rc=${PIPESTATUS[0]}
if [[ ! -f "$work/res/summary.json" ]]; then # cut short: the table from what is there
  python3 "$work/table.py" "$work/res" "$(cat "$work/res/gpu.txt" 2>/dev/null || echo unknown)" \
    --json "$work/res/summary.json" --commit "$(head -1 "$work/commit.txt")" |
    tee "$work/res/table.txt" >>"$out/run.log"
fi

# Everything the run wrote except the programs, the data and checkpoints.
(cd "$work" && find res logs cmp -type f ! -name train_cuda ! -name '*.npy' \
   ! -path '*/ck-*' 2>/dev/null | tar -czf "$out/results.tar.gz" -T -)
cp "$work/res/table.txt" "$out/" 2>/dev/null
echo "device_run: gpu.sh run exited $rc; results in $out"
exit "$rc"

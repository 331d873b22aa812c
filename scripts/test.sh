#!/usr/bin/env bash
# Sets everything up, builds, and runs the whole test suite (lit + GoogleTest
# through ctest), then its sanitized part (scripts/sanitize.sh: a second build
# with ASan + UBSan; AMPC_SKIP_SANITIZE=1 leaves it out). Prints ctest's and
# lit's summaries; exits non-zero on any failure.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${AMPC_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/setup.sh"
cd "$BUILD"
ctest --output-on-failure --timeout 1800 -j "$(nproc)"
if [ "${AMPC_SKIP_SANITIZE:-0}" != 1 ]; then
  AMPC_BUILD_DIR="$BUILD" "$ROOT/scripts/sanitize.sh"
fi

#!/usr/bin/env bash
# Sets everything up, builds, and runs the whole test suite (lit + GoogleTest
# through ctest). Prints ctest's summary; exits non-zero on any failure.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${AMPC_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/setup.sh"
cd "$BUILD"
ctest --output-on-failure --timeout 1800 -j "$(nproc)"

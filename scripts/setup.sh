#!/usr/bin/env bash
# Installs what ampc needs from Debian (only what is missing), then configures
# and builds it with Ninja into build/ (AMPC_BUILD_DIR; AMPC_CUDA_ARCHS
# overrides the GPU architectures, default 80;90). Idempotent. Arguments are
# Ninja targets (default: everything); scripts/main.sh builds only `ampc`
# and the runtime it links.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${AMPC_BUILD_DIR:-$ROOT/build}

PACKAGES=(
  cmake ninja-build g++ python3 python3-venv pkg-config
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libabsl-dev libgtest-dev nlohmann-json3-dev zlib1g-dev
  libopenblas-dev openmpi-bin libopenmpi-dev
  dataset-fashion-mnist fortunes graphviz gnuplot-nox
  libonnx-dev libprotobuf-dev libonnx-testdata
  clang-22 libclang-rt-22-dev  # the sanitized build (scripts/sanitize.sh)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[setup] installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python packages for the interop tests (safetensors reads our checkpoints),
# in a venv inside the build folder.
VENV=$BUILD/pyenv
if ! "$VENV/bin/python" -c "import safetensors, numpy" 2>/dev/null; then
  echo "[setup] creating $VENV (pip: safetensors numpy)"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check safetensors numpy
fi

# Opt-in, AMPC_WITH_TORCH=1: PyTorch, onnx, onnxruntime (and onnxscript, for
# torch.onnx.export(dynamo=True)) in the same venv, for the PyTorch round
# trip's re-export test (test/Import/torch/reexport.test; without them it is
# UNSUPPORTED). PyPI's torch pulls the CUDA libraries: about 5.5 GB.
if [ "${AMPC_WITH_TORCH:-0}" = 1 ] &&
   ! "$VENV/bin/python" -c "import torch, onnx, onnxruntime, onnxscript" 2>/dev/null; then
  echo "[setup] AMPC_WITH_TORCH=1: pip install torch onnx onnxruntime onnxscript into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check torch onnx onnxruntime onnxscript
fi

# cuDNN's frontend headers (header-only C++; flash attention on the CUDA
# target) from PyPI's nvidia-cudnn-frontend wheel, a zip whose include/ is
# all we keep, in $BUILD/_deps/cudnn_frontend/include (CMake looks there).
# Without network the build goes on and attention keeps the math path.
CUDNN_FE=$BUILD/_deps/cudnn_frontend
CUDNN_FE_VERSION=${AMPC_CUDNN_FRONTEND_VERSION:-1.32.0}
if [ ! -f "$CUDNN_FE/include/cudnn_frontend.h" ]; then
  echo "[setup] fetching the cuDNN frontend headers (pip: nvidia-cudnn-frontend==$CUDNN_FE_VERSION)"
  fe_tmp=$(mktemp -d)
  if "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps \
       --only-binary=:all: -d "$fe_tmp" "nvidia-cudnn-frontend==$CUDNN_FE_VERSION" &&
     "$VENV/bin/python" - "$fe_tmp" "$CUDNN_FE" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith("include/")]
    if "include/cudnn_frontend.h" not in names:
        sys.exit("no include/cudnn_frontend.h in " + wheel)
    z.extractall(sys.argv[2], names)
PY
  then
    :
  else
    echo "[setup] warning: no cuDNN frontend headers (offline?): attention on the CUDA target uses the math path"
  fi
  rm -rf "$fe_tmp"
fi

# The CUDA target is compiled (not run) when the toolkit is there.
export PATH="$PATH:/usr/local/cuda/bin"

echo "[setup] configuring $BUILD"
cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DAMPC_PYTHON="$VENV/bin/python" \
  ${AMPC_CUDA_ARCHS:+-DAMPC_CUDA_ARCHS="$AMPC_CUDA_ARCHS"} >/dev/null
echo "[setup] building (ninja${*:+ $*})"
ninja -C "$BUILD" "$@"

# lit configuration for ampc. Tests are .mlir files (and a few .test shell
# scripts) under test/; tools come from the build tree.
import os
import shutil
import lit.formats

config.name = "ampc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ampc_obj_root, "test")

path = [config.ampc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])]
config.environment["PATH"] = os.pathsep.join(path)
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --dump-input=fail"
# One OpenBLAS thread per training binary: lit already runs one test per
# core, and OpenBLAS's idle threads spin (on CI's two cores the resnet test
# took 2.3x the CPU time with two). Tests assert values, not speed; set
# OPENBLAS_NUM_THREADS to test another count.
config.environment["OPENBLAS_NUM_THREADS"] = os.environ.get("OPENBLAS_NUM_THREADS", "1")
# OpenBLAS picks its kernels by CPU, and its AVX-512 SGEMM (SkylakeX,
# Cooperlake) sums in another order than the AVX2 and SSE kernels, which
# agree with each other bit for bit on the examples. So that recorded
# values do not depend on the machine, a CPU with AVX2 and FMA runs the
# tests on the Haswell (AVX2) kernels, whatever OpenBLAS would pick (and a
# training binary then never starts itself again on other kernels:
# runtime/cpu/BlasCore.h); OPENBLAS_CORETYPE overrides.
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()
if "OPENBLAS_CORETYPE" in os.environ:
    config.environment["OPENBLAS_CORETYPE"] = os.environ["OPENBLAS_CORETYPE"]
elif {"avx2", "fma"} <= _cpu_flags():
    config.environment["OPENBLAS_CORETYPE"] = "Haswell"

config.substitutions.append(("%examples", os.path.join(config.ampc_src_root, "examples")))
config.substitutions.append(("%src", config.ampc_src_root))
config.substitutions.append(("%ampc_tools", config.ampc_tools_dir))
config.substitutions.append(("%python", shutil.which("python3") or "python3"))

# Features later tests can require.
if shutil.which("nvidia-smi") and os.system("nvidia-smi -L >/dev/null 2>&1") == 0:
    config.available_features.add("gpu")
def _on(value):
    return str(value).upper() in ("ON", "1", "TRUE", "YES")

if (_on(config.ampc_with_cuda) and config.cuda_bin_dir
        and os.path.exists(os.path.join(config.cuda_bin_dir, "nvcc"))):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", os.path.join(config.cuda_bin_dir, "nvcc")))
    # runtime/cuda built with cuDNN (CMake AMPC_WITH_CUDNN).
    if _on(getattr(config, "ampc_with_cudnn", "")):
        config.available_features.add("cudnn")
# Data the end-to-end tests train on (Debian packages dataset-fashion-mnist
# and fortunes, which scripts/setup.sh installs; the tests fail without them).
fmnist = "/usr/share/datasets/fashion-mnist"
config.substitutions.append(("%fmnist", fmnist))
fortunes = "/usr/share/games/fortunes"
config.substitutions.append(("%fortunes", fortunes))
# `ampc import` (CMake AMPC_WITH_ONNX) and ONNX's node tests (Debian's
# libonnx-testdata).
if _on(getattr(config, "ampc_with_onnx", "")):
    config.available_features.add("onnx")
    if os.path.isdir("/usr/share/libonnx-testdata/data/node"):
        config.available_features.add("onnx-testdata")
if shutil.which("dot"):
    config.available_features.add("graphviz")

# A Python with PyTorch, onnx, onnxruntime and onnxscript for the tests
# that check ampc against PyTorch itself (autocast decisions, checkpoints loaded into an
# nn.Module, the ONNX round trip's live re-export): the environment variable
# AMPC_TORCH_PYTHON, else CMake's AMPC_TORCH_PYTHON, else the build's Python
# (AMPC_WITH_TORCH=1 scripts/setup.sh installs them there). Those tests say
# `REQUIRES: torch` and are unsupported without one.
_torch_py = (os.environ.get("AMPC_TORCH_PYTHON") or getattr(config, "ampc_torch_python", "")
             or getattr(config, "ampc_python", ""))
if _torch_py and os.system(
        "'%s' -c 'import torch, onnx, onnxruntime, onnxscript, numpy' >/dev/null 2>&1" % _torch_py) == 0:
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", _torch_py))
else:
    lit_config.note("tests against PyTorch (REQUIRES: torch) unsupported: "
                    "'%s' lacks torch/onnx/onnxruntime/onnxscript (AMPC_WITH_TORCH=1 "
                    "scripts/setup.sh installs them)" % (_torch_py or "no AMPC_PYTHON"))

# AMPC_RECORD=1 re-records the expected values of e2e/examples-bitwise.test.
if os.environ.get("AMPC_RECORD"):
    config.environment["AMPC_RECORD"] = os.environ["AMPC_RECORD"]

# A build with -DAMPC_SANITIZE (scripts/sanitize.sh): tools and the training
# binaries are instrumented. Tests that measure time scaling say
# `UNSUPPORTED: sanitized`; the sanitizers' options pass through.
if config.ampc_sanitize:
    config.available_features.add("sanitized")
# fuzz.test's iterations at once: two in the sanitized run, where it is the
# longest test; one in the main run, where a third process beside lit's two
# workers disturbed compile-scaling.test's CPU-time fits.
config.substitutions.append(("%fuzz_jobs", "2" if config.ampc_sanitize else "1"))
# Precompiled headers (-DAMPC_PCH=ON, the default): cmake/AmpcHostPch.cmake.
if _on(config.ampc_pch):
    config.available_features.add("host-pch")
for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

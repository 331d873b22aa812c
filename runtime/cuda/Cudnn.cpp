//===- Cudnn.cpp - conv2d passes on cuDNN (legacy convolution API) --------===//
//
// NCHW tensors, the KCRS filter [O, C/groups, KH, KW], cross-correlation
// (PyTorch's conv2d), the group count on the convolution descriptor. Compute
// type FLOAT for f32, f16 and bf16 tensors (FP32 accumulation, each result
// rounded once); math type FMA for f32 (no TF32: ampc's FP32 is true FP32),
// tensor ops allowed for f16/bf16.
//
// The algorithm is the first result of cuDNN's heuristic query
// (cudnnGetConvolution*Algorithm_v7; never cudnnFind*, which synchronises
// and allocates) that is supported, deterministic (no atomics: the im2col
// path is deterministic and so is this one) and whose workspace fits
// kMaxWorkspaceBytes. The choice depends only on the geometry, the dtype,
// the GPU and the cuDNN version. The workspace is the library's scratch
// memory, so after the warm-up step a call allocates nothing.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Cudnn.h"
#include "runtime/cuda/Common.h"
#include "runtime/cuda/CudnnHandle.h"
#include "runtime/kernels/EnvSwitch.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#if AMPC_HAVE_CUDNN
#include <cudnn.h>
#if CUDNN_MAJOR < 9
#error "runtime/cuda needs cuDNN 9 (or configure with -DAMPC_WITH_CUDNN=OFF)"
#endif

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <vector>
#endif

namespace ampc::cuda::detail {

namespace {

// AMPC_CUDA_CONV: unset, "" or "cudnn": cuDNN where it supports the
// configuration; "im2col": always the im2col + cuBLASLt path (A/B timing).
bool im2colForced() {
  static const bool forced =
      kernels::envChoice("AMPC_CUDA_CONV", {"cudnn", "im2col"}) == 1;
  return forced;
}

} // namespace

#if !AMPC_HAVE_CUDNN

struct ConvPlan {};

ConvPlan *convPlan(ConvPass, const kernels::detail::ConvShape &, DType, DType,
                   DType, cudaStream_t, std::string_view) {
  (void)im2colForced(); // still reject a misspelt value
  return nullptr;
}

bool convRun(ConvPlan &, void *, void *, void *, float, cudaStream_t,
             std::string_view) {
  return false;
}

#else

// Larger workspaces skip to the heuristic's next algorithm. A constant (not
// the free memory) keeps the choice the same from run to run.
constexpr size_t kMaxWorkspaceBytes = size_t(512) << 20;

struct ConvPlan {
  ConvPass pass = ConvPass::Forward;
  bool usable = false;
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
  cudnnFilterDescriptor_t wd = nullptr;
  cudnnConvolutionDescriptor_t cd = nullptr;
  int algo = 0; // the pass's cudnnConvolution*Algo_t
  size_t workspace = 0;
};

namespace {

bool notSupported(cudnnStatus_t s) {
  return CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED;
}

cudnnDataType_t cudnnType(DType t) {
  switch (t) {
  case DType::F16:
    return CUDNN_DATA_HALF;
  case DType::BF16:
    return CUDNN_DATA_BFLOAT16;
  default:
    return CUDNN_DATA_FLOAT;
  }
}

// Descriptor setup and heuristics; false (with a warning unless cuDNN just
// does not support the configuration) leaves the plan unusable.
struct Setup {
  std::string_view op;
  bool ok = true;
  bool operator()(cudnnStatus_t s, const char *what) {
    if (!ok || s == CUDNN_STATUS_SUCCESS)
      return ok;
    ok = false;
    if (!notSupported(s))
      std::fprintf(stderr,
                   "warning: %.*s: cuDNN %s: %s; this geometry uses im2col\n",
                   int(op.size()), op.data(), what, cudnnGetErrorString(s));
    return false;
  }
};

// Picks the first usable result of a heuristic query (all three perf
// structs have the same fields); sets the plan's algorithm, math type and
// workspace. |workspaceOf| asks cuDNN for the algorithm's workspace with the
// math type set.
template <class Perf, class WorkspaceOf>
bool pick(ConvPlan &p, const std::vector<Perf> &results, int count,
          bool fp32, WorkspaceOf workspaceOf) {
  for (int i = 0; i < count; ++i) {
    const Perf &r = results[i];
    if (r.status != CUDNN_STATUS_SUCCESS ||
        r.determinism != CUDNN_DETERMINISTIC)
      continue;
    cudnnMathType_t math = r.mathType;
    if (fp32) {
      // FMA only: a tensor-op result would be TF32.
      if (math != CUDNN_FMA_MATH && math != CUDNN_DEFAULT_MATH)
        continue;
      math = CUDNN_FMA_MATH;
    }
    if (cudnnSetConvolutionMathType(p.cd, math) != CUDNN_STATUS_SUCCESS)
      continue;
    size_t ws = 0;
    if (workspaceOf(r.algo, &ws) != CUDNN_STATUS_SUCCESS)
      continue;
    ws = std::max(ws, r.memory);
    if (ws > kMaxWorkspaceBytes)
      continue;
    p.algo = int(r.algo);
    p.workspace = ws;
    return true;
  }
  return false;
}

void build(ConvPlan &p, cudnnHandle_t h, const kernels::detail::ConvShape &g,
           DType t, std::string_view op) {
  Setup ok{op};
  cudnnDataType_t dt = cudnnType(t);
  bool fp32 = t == DType::F32;
  ok(cudnnCreateTensorDescriptor(&p.xd), "cudnnCreateTensorDescriptor");
  ok(cudnnCreateTensorDescriptor(&p.yd), "cudnnCreateTensorDescriptor");
  ok(cudnnCreateFilterDescriptor(&p.wd), "cudnnCreateFilterDescriptor");
  ok(cudnnCreateConvolutionDescriptor(&p.cd),
     "cudnnCreateConvolutionDescriptor");
  ok(cudnnSetTensor4dDescriptor(p.xd, CUDNN_TENSOR_NCHW, dt, int(g.n),
                                int(g.c), int(g.h), int(g.w)),
     "x descriptor");
  ok(cudnnSetFilter4dDescriptor(p.wd, dt, CUDNN_TENSOR_NCHW, int(g.o),
                                int(g.cg), int(g.kh), int(g.kw)),
     "w descriptor");
  ok(cudnnSetTensor4dDescriptor(p.yd, CUDNN_TENSOR_NCHW, dt, int(g.n),
                                int(g.o), int(g.oh), int(g.ow)),
     "y descriptor");
  ok(cudnnSetConvolution2dDescriptor(p.cd, int(g.ph), int(g.pw), int(g.sh),
                                     int(g.sw), int(g.dh), int(g.dw),
                                     CUDNN_CROSS_CORRELATION,
                                     CUDNN_DATA_FLOAT),
     "convolution descriptor");
  ok(cudnnSetConvolutionGroupCount(p.cd, int(g.groups)), "group count");
  ok(cudnnSetConvolutionMathType(p.cd,
                                 fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
     "math type");
  if (!ok.ok)
    return;
  // cuDNN must agree on the result's shape (ampc's geometry checked it).
  int dims[4] = {};
  if (!ok(cudnnGetConvolution2dForwardOutputDim(p.cd, p.xd, p.wd, &dims[0],
                                                &dims[1], &dims[2], &dims[3]),
          "output dims"))
    return;
  if (dims[0] != g.n || dims[1] != g.o || dims[2] != g.oh || dims[3] != g.ow)
    return;

  int max = 0, count = 0;
  switch (p.pass) {
  case ConvPass::Forward: {
    if (!ok(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max), "max count"))
      return;
    std::vector<cudnnConvolutionFwdAlgoPerf_t> r(size_t(std::max(max, 1)));
    if (!ok(cudnnGetConvolutionForwardAlgorithm_v7(h, p.xd, p.wd, p.cd, p.yd,
                                                   max, &count, r.data()),
            "cudnnGetConvolutionForwardAlgorithm_v7"))
      return;
    p.usable = pick(p, r, count, fp32, [&](auto algo, size_t *ws) {
      return cudnnGetConvolutionForwardWorkspaceSize(h, p.xd, p.wd, p.cd,
                                                     p.yd, algo, ws);
    });
    break;
  }
  case ConvPass::BackwardData: {
    if (!ok(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max),
            "max count"))
      return;
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> r(size_t(std::max(max, 1)));
    if (!ok(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                h, p.wd, p.yd, p.cd, p.xd, max, &count, r.data()),
            "cudnnGetConvolutionBackwardDataAlgorithm_v7"))
      return;
    p.usable = pick(p, r, count, fp32, [&](auto algo, size_t *ws) {
      return cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.wd, p.yd, p.cd,
                                                          p.xd, algo, ws);
    });
    break;
  }
  case ConvPass::BackwardFilter: {
    if (!ok(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max),
            "max count"))
      return;
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> r(
        size_t(std::max(max, 1)));
    if (!ok(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                h, p.xd, p.yd, p.cd, p.wd, max, &count, r.data()),
            "cudnnGetConvolutionBackwardFilterAlgorithm_v7"))
      return;
    p.usable = pick(p, r, count, fp32, [&](auto algo, size_t *ws) {
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, p.xd, p.yd, p.cd, p.wd, algo, ws);
    });
    break;
  }
  }
}

bool fitsInt(int64_t v) { return v > 0 && v <= INT_MAX; }

} // namespace

ConvPlan *convPlan(ConvPass pass, const kernels::detail::ConvShape &g, DType tx,
                   DType tw, DType ty, cudaStream_t stream,
                   std::string_view op) {
  if (im2colForced())
    return nullptr;
  if (tx != tw || tx != ty ||
      (tx != DType::F32 && tx != DType::F16 && tx != DType::BF16))
    return nullptr;
  // cuDNN's legacy descriptors take int dimensions; empty tensors stay on
  // the im2col path (which handles them).
  if (!fitsInt(g.n * g.c * g.h * g.w) || !fitsInt(g.o * g.cg * g.kh * g.kw) ||
      !fitsInt(g.n * g.o * g.oh * g.ow))
    return nullptr;
  using Key = std::array<int64_t, 18>;
  Key key{int64_t(pass), int64_t(tx), g.n,  g.c,  g.h,  g.w,
          g.o,           g.kh,        g.kw, g.oh, g.ow, g.sh,
          g.sw,          g.ph,        g.pw, g.dh, g.dw, g.groups};
  static std::map<Key, ConvPlan> cache;
  std::lock_guard<std::mutex> lock(cudnnMutex());
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second.usable ? &it->second : nullptr;
  // Handle creation and the first call of a plan may allocate: both belong
  // to the warm-up step, as scratch growth does.
  failIfCapturing(stream, op, "a cuDNN plan cannot be made");
  ConvPlan &p = cache[key];
  p.pass = pass;
  if (cudnnHandle_t h = cudnnHandle())
    build(p, h, g, tx, op);
  return p.usable ? &p : nullptr;
}

bool convRun(ConvPlan &p, void *x, void *w, void *y, float beta,
             cudaStream_t stream, std::string_view op) {
  std::lock_guard<std::mutex> lock(cudnnMutex());
  cudnnHandle_t h = cudnnHandle(); // made with the plan
  cudnnStatus_t s = cudnnSetStream(h, stream);
  if (s == CUDNN_STATUS_SUCCESS) {
    void *ws = p.workspace ? scratch(p.workspace, op, stream) : nullptr;
    const float alpha = 1.0f;
    switch (p.pass) {
    case ConvPass::Forward:
      s = cudnnConvolutionForward(h, &alpha, p.xd, x, p.wd, w, p.cd,
                                  cudnnConvolutionFwdAlgo_t(p.algo), ws,
                                  p.workspace, &beta, p.yd, y);
      break;
    case ConvPass::BackwardData:
      s = cudnnConvolutionBackwardData(h, &alpha, p.wd, w, p.yd, y, p.cd,
                                       cudnnConvolutionBwdDataAlgo_t(p.algo),
                                       ws, p.workspace, &beta, p.xd, x);
      break;
    case ConvPass::BackwardFilter:
      s = cudnnConvolutionBackwardFilter(
          h, &alpha, p.xd, x, p.yd, y, p.cd,
          cudnnConvolutionBwdFilterAlgo_t(p.algo), ws, p.workspace, &beta,
          p.wd, w);
      break;
    }
  }
  if (s == CUDNN_STATUS_SUCCESS)
    return true;
  if (notSupported(s)) {
    p.usable = false;
    return false;
  }
  std::fprintf(stderr, "error: %.*s: cuDNN: %s\n", int(op.size()), op.data(),
               cudnnGetErrorString(s));
  std::exit(1);
}

#endif // AMPC_HAVE_CUDNN

} // namespace ampc::cuda::detail

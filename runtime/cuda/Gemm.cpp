//===- Gemm.cpp - One GEMM on cuBLASLt (matmul, linear, conv2d) -----------===//
//
// Row-major problems are handed to cuBLASLt (column-major) as their
// transposes: C^T = op(B)^T op(A)^T. Descriptors, layouts and the heuristic's
// algorithm are made once per shape and cached, so a captured step only
// enqueues cublasLtMatmul calls.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Gemm.h"
#include "runtime/cuda/Common.h"

#include <cublasLt.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

namespace ampc::cuda {

namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20; // cuBLAS's Hopper advice

cublasLtHandle_t gHandle = nullptr;
void *gWorkspace = nullptr;

void checkLt(cublasStatus_t s, const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return;
  std::fprintf(stderr, "error: cuBLASLt: %s failed (status %d)\n", what,
               int(s));
  std::exit(1);
}

cudaDataType_t cudaType(DType t, std::string_view op) {
  switch (t) {
  case DType::F32:
    return CUDA_R_32F;
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  default:
    detail::fail(op, "GEMM operands must be f32, f16 or bf16");
  }
}

using Key = std::tuple<int, int, int64_t, int64_t, int64_t, int, int, int,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, bool, uint32_t, uint32_t, uint32_t, bool,
                       uint32_t>;

// The largest power of two (<= 256) dividing the address of every matrix of
// a batch: cuBLASLt's heuristic must not assume more (the memory plan
// aligns buffers to 64 bytes only).
uint32_t alignment(const void *p, int64_t strideElems, size_t esz) {
  uint64_t a = reinterpret_cast<uintptr_t>(p) | 256u;
  if (strideElems)
    a |= uint64_t(strideElems) * esz;
  return uint32_t(a & (~a + 1));
}

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool found = false; // false: no algorithm for a bias-gradient epilogue
};

cublasLtMatrixLayout_t layout(cudaDataType_t t, int64_t rows, int64_t cols,
                              int64_t ld, int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t l;
  checkLt(cublasLtMatrixLayoutCreate(&l, t, uint64_t(rows), uint64_t(cols), ld),
          "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    int32_t count = int32_t(batch);
    checkLt(cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
            "batch count");
    checkLt(cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                sizeof(stride)),
            "batch stride");
  }
  return l;
}

Plan &plan(const detail::Gemm &g, std::string_view op) {
  const void *biasPtr = g.biasGrad ? g.biasGrad : g.bias;
  static std::map<Key, Plan> cache;
  static std::mutex mu;
  Key key{g.transA, g.transB, g.m,      g.n,      g.k,       int(g.aType),
          int(g.bType), int(g.cType), g.lda,  g.ldb,    g.ldc,     g.batch,
          g.strideA, g.strideB, g.strideC, g.bias != nullptr,
          alignment(g.a, g.strideA, dtypeSize(g.aType)),
          alignment(g.b, g.strideB, dtypeSize(g.bType)),
          alignment(g.c, g.strideC, dtypeSize(g.cType)),
          g.biasGrad != nullptr,
          biasPtr ? alignment(biasPtr, 0, dtypeSize(g.cType)) : 0u};
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  initialize();
  Plan p;
  checkLt(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
  // Column-major view: A' = B (op transB), B' = A (op transA), C' = C^T.
  cublasOperation_t opA = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  checkLt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                         &opA, sizeof(opA)),
          "transa");
  checkLt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                         &opB, sizeof(opB)),
          "transb");
  cudaDataType_t ta = cudaType(g.aType, op), tb = cudaType(g.bType, op),
                 tc = cudaType(g.cType, op);
  if (g.bias || g.biasGrad) {
    // In the column-major view B' is the row-major A: the sum of op(A) over
    // K is the bias gradient of B' (BGRADB), one entry per column of C'.
    cublasLtEpilogue_t epi =
        g.biasGrad ? CUBLASLT_EPILOGUE_BGRADB : CUBLASLT_EPILOGUE_BIAS;
    checkLt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                           &epi, sizeof(epi)),
            "epilogue");
    checkLt(cublasLtMatmulDescSetAttribute(
                p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &tc, sizeof(tc)),
            "bias type");
    // The heuristic judges the bias vector's alignment from this pointer
    // (cublasLt.h), so it gets the real one; its alignment is in the key.
    checkLt(cublasLtMatmulDescSetAttribute(p.desc,
                                           CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                           &biasPtr, sizeof(biasPtr)),
            "bias pointer");
  }
  p.la = g.transB ? layout(tb, g.k, g.n, g.ldb, g.batch, g.strideB)
                  : layout(tb, g.n, g.k, g.ldb, g.batch, g.strideB);
  p.lb = g.transA ? layout(ta, g.m, g.k, g.lda, g.batch, g.strideA)
                  : layout(ta, g.k, g.m, g.lda, g.batch, g.strideA);
  p.lc = layout(tc, g.n, g.m, g.ldc, g.batch, g.strideC);

  cublasLtMatmulPreference_t pref;
  checkLt(cublasLtMatmulPreferenceCreate(&pref), "preference");
  size_t ws = kWorkspaceBytes;
  checkLt(cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
          "workspace preference");
  // A' is B, B' is A (the column-major view).
  uint32_t alignA = std::get<17>(key), alignB = std::get<16>(key),
           alignC = std::get<18>(key);
  checkLt(cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA,
              sizeof(alignA)),
          "alignment");
  checkLt(cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB,
              sizeof(alignB)),
          "alignment");
  checkLt(cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC,
              sizeof(alignC)),
          "alignment");
  checkLt(cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignC,
              sizeof(alignC)),
          "alignment");
  if (tc != CUDA_R_32F) {
    // Split-K partial sums in FP32 only: the in-place and output-type
    // schemes would add them in the half output type, so the result would
    // not be the FP32 accumulation rounded once (PyTorch's
    // allow_*_reduced_precision_reduction = False).
    uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    checkLt(cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                sizeof(schemes)),
            "reduction schemes");
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
      gHandle, p.desc, p.la, p.lb, p.lc, p.lc, pref, 1, &result, &found);
  // NOT_SUPPORTED is how the heuristic may decline an epilogue.
  if (!(g.biasGrad && st == CUBLAS_STATUS_NOT_SUPPORTED))
    checkLt(st, "cublasLtMatmulAlgoGetHeuristic");
  if (st != CUBLAS_STATUS_SUCCESS)
    found = 0;
  cublasLtMatmulPreferenceDestroy(pref);
  if (found == 0 && !g.biasGrad)
    detail::fail(op, "cuBLASLt has no algorithm for this GEMM");
  if (found == 0)
    std::fprintf(stderr,
                 "note: %.*s: cuBLASLt has no algorithm for the bias-gradient "
                 "epilogue (m %lld, n %lld, k %lld); the GEMM and the sum run "
                 "apart\n",
                 int(op.size()), op.data(), (long long)g.m, (long long)g.n,
                 (long long)g.k);
  // A bias-gradient problem without an algorithm is cached as such, so the
  // heuristic runs once and every call takes the separate path.
  p.found = found != 0;
  p.algo = result.algo;
  return cache.emplace(key, p).first->second;
}

} // namespace

void initialize() {
  static std::once_flag once;
  std::call_once(once, [] {
    checkLt(cublasLtCreate(&gHandle), "cublasLtCreate");
    check(cudaMalloc(&gWorkspace, kWorkspaceBytes), "cudaMalloc(workspace)");
  });
}

namespace detail {

bool gemm(const Gemm &g, cudaStream_t stream, std::string_view op) {
  if (g.biasGrad && (g.bias || g.batch != 1))
    detail::fail(op, "a bias gradient needs an unbatched GEMM without a bias");
  if (g.m == 0 || g.n == 0 || (g.biasGrad && g.k == 0))
    return !g.biasGrad; // empty: the separate path handles the sum
  Plan &p = plan(g, op);
  if (!p.found)
    return false;
  if (g.bias || g.biasGrad) {
    const void *ptr = g.biasGrad ? g.biasGrad : g.bias;
    checkLt(cublasLtMatmulDescSetAttribute(p.desc,
                                           CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                           &ptr, sizeof(ptr)),
            "bias pointer");
  }
  checkLt(cublasLtMatmul(gHandle, p.desc, &g.alpha, g.b, p.la, g.a, p.lb,
                         &g.beta, g.c, p.lc, g.c, p.lc, &p.algo, gWorkspace,
                         kWorkspaceBytes, stream),
          "cublasLtMatmul");
  return true;
}

} // namespace detail

} // namespace ampc::cuda

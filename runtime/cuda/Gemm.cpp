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

#include <compare>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

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

// The largest power of two (<= 256) dividing the address of every matrix of
// a batch: cuBLASLt's heuristic must not assume more (the memory plan
// aligns buffers to 64 bytes only).
uint32_t alignment(const void *p, int64_t strideElems, size_t esz) {
  uint64_t a = reinterpret_cast<uintptr_t>(p) | 256u;
  if (strideElems)
    a |= uint64_t(strideElems) * esz;
  return uint32_t(a & (~a + 1));
}

using detail::Gelu;

// The epilogue |g| asks for.
cublasLtEpilogue_t epilogueOf(const detail::Gemm &g) {
  // In the column-major view B' is the row-major A: the sum of op(A) over K
  // is the bias gradient of B' (BGRADB), one entry per column of C'.
  if (g.biasGrad)
    return CUBLASLT_EPILOGUE_BGRADB;
  if (g.gelu == Gelu::Forward)
    return g.bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
  if (g.gelu == Gelu::Backward)
    return CUBLASLT_EPILOGUE_DGELU;
  return g.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

const char *nameOf(cublasLtEpilogue_t e) {
  switch (e) {
  case CUBLASLT_EPILOGUE_DEFAULT:
    return "DEFAULT";
  case CUBLASLT_EPILOGUE_BGRADB:
    return "BGRADB";
  case CUBLASLT_EPILOGUE_GELU_AUX:
    return "GELU_AUX";
  case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
    return "GELU_AUX_BIAS";
  case CUBLASLT_EPILOGUE_DGELU:
    return "DGELU";
  default: // epilogueOf() gives no other
    return "BIAS";
  }
}

// An epilogue the caller has a separate path for, so cuBLASLt may decline
// it (gemm() then returns false).
bool declinable(const detail::Gemm &g) {
  return g.biasGrad || g.gelu != Gelu::None;
}

// Everything a plan depends on: the descriptors, the layouts and the
// heuristic's choice, which also depends on the alignment of every pointer
// it is given (cublasLt.h).
struct Key {
  bool transA, transB;
  int64_t m, n, k;
  int aType, bType, cType;
  int64_t lda, ldb, ldc, batch, strideA, strideB, strideC;
  int epilogue;
  int64_t ldAux;
  uint32_t alignA, alignB, alignC, alignBias, alignAux;
  auto operator<=>(const Key &) const = default;
};

Key keyOf(const detail::Gemm &g) {
  size_t ec = dtypeSize(g.cType);
  const void *biasPtr = g.biasGrad ? g.biasGrad : g.bias;
  bool gelu = g.gelu != Gelu::None;
  return Key{g.transA, g.transB, g.m, g.n, g.k,
             int(g.aType), int(g.bType), int(g.cType),
             g.lda, g.ldb, g.ldc, g.batch, g.strideA, g.strideB, g.strideC,
             int(epilogueOf(g)), gelu ? g.ldAux : 0,
             alignment(g.a, g.strideA, dtypeSize(g.aType)),
             alignment(g.b, g.strideB, dtypeSize(g.bType)),
             alignment(g.c, g.strideC, ec),
             biasPtr ? alignment(biasPtr, 0, ec) : 0u,
             gelu ? alignment(g.aux, 0, ec) : 0u};
}

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool found = false; // false: no algorithm for a declinable epilogue
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

// The epilogue's vector and matrix. Set for the heuristic (it judges their
// alignment from the pointers, which is why that is in the key) and again
// on every call, since the plan is shared by all calls of its key.
void setEpiloguePointers(cublasLtMatmulDesc_t desc, const detail::Gemm &g) {
  if (const void *bias = g.biasGrad ? g.biasGrad : g.bias)
    checkLt(cublasLtMatmulDescSetAttribute(
                desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
            "bias pointer");
  if (g.gelu != Gelu::None)
    checkLt(cublasLtMatmulDescSetAttribute(desc,
                                           CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                           &g.aux, sizeof(g.aux)),
            "aux pointer");
}

// The epilogue attributes of |p.desc| (none for DEFAULT).
void setEpilogue(Plan &p, const detail::Gemm &g, cudaDataType_t tc) {
  cublasLtEpilogue_t epi = epilogueOf(g);
  if (epi == CUBLASLT_EPILOGUE_DEFAULT)
    return;
  checkLt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                         &epi, sizeof(epi)),
          "epilogue");
  if (g.bias || g.biasGrad)
    checkLt(cublasLtMatmulDescSetAttribute(
                p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &tc, sizeof(tc)),
            "bias type");
  if (g.gelu != Gelu::None) {
    // The GELU matrix is row-major [m, n] like C: column-major n x m, the
    // layout of C' (ld >= n), in C's type.
    int64_t ld = g.ldAux;
    checkLt(cublasLtMatmulDescSetAttribute(
                p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof(ld)),
            "aux ld");
    // The unset type (-1) is D's. The cuBLAS docs allow setting it to D's
    // type for 16F and 16BF only ("otherwise ... left unset", else
    // cublasLtMatmul returns INVALID_VALUE), so f32 keeps the default.
    if (tc != CUDA_R_32F) {
      int32_t type = int32_t(tc);
      checkLt(cublasLtMatmulDescSetAttribute(
                  p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &type,
                  sizeof(type)),
              "aux type");
    }
  }
  setEpiloguePointers(p.desc, g);
}

// Says once per plan that |g|'s epilogue does not run here and its
// separate path does instead.
void noteApart(const detail::Gemm &g, std::string_view op, const char *why) {
  std::fprintf(stderr,
               "note: %.*s: %s the %s epilogue (m %lld, n %lld, k %lld); the "
               "GEMM and the %s run apart\n",
               int(op.size()), op.data(), why, nameOf(epilogueOf(g)),
               (long long)g.m, (long long)g.n, (long long)g.k,
               g.biasGrad ? "sum" : "GELU");
}

Plan &plan(const detail::Gemm &g, cudaStream_t stream, std::string_view op) {
  static std::map<Key, Plan> cache;
  static std::mutex mu;
  Key key = keyOf(g);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  // The heuristic query is a host call: the captured step must have met
  // every GEMM on its eager first run (a run-time switch changed between
  // the two, e.g. AMPC_CUDA_GEMM_BGRAD, would get here).
  detail::failIfCapturing(stream, op, "a cuBLASLt plan cannot be made");
  initialize();
  Plan p;
  // cublasLt.h: the GELU matrix's leading dimension must be divisible by 8.
  // Cached unfound (no descriptors), so every call takes the separate path.
  if (g.gelu != Gelu::None && g.ldAux % 8 != 0) {
    noteApart(g, op,
              "the GELU matrix's leading dimension must be a multiple of 8 for");
    return cache.emplace(key, p).first->second;
  }
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
  setEpilogue(p, g, tc);
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
  uint32_t alignA = key.alignB, alignB = key.alignA, alignC = key.alignC;
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
  // NOT_SUPPORTED is how the heuristic may decline an epilogue; a
  // declinable one it refuses any other way (INVALID_VALUE for a type the
  // epilogue does not take, say) runs apart too, saying why: the GPU tests'
  // `fused` mode makes that an error.
  if (!declinable(g))
    checkLt(st, "cublasLtMatmulAlgoGetHeuristic");
  if (st != CUBLAS_STATUS_SUCCESS)
    found = 0;
  cublasLtMatmulPreferenceDestroy(pref);
  if (found == 0 && !declinable(g))
    detail::fail(op, "cuBLASLt has no algorithm for this GEMM");
  if (found == 0) {
    char why[96];
    std::snprintf(why, sizeof(why),
                  "cuBLASLt has no algorithm (heuristic status %d) for",
                  int(st));
    noteApart(g, op, why);
  }
  // A declinable problem without an algorithm is cached as such, so the
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

const char *epilogueName(const Gemm &g) { return nameOf(epilogueOf(g)); }

// The GELU epilogue's preconditions that are caller bugs (a constraint
// cuBLASLt documents is not: gemm() declines instead).
static void checkGelu(const Gemm &g, std::string_view op) {
  if (g.batch != 1 || g.biasGrad || !g.aux ||
      (g.gelu == Gelu::Backward && g.bias))
    fail(op, "a GELU epilogue needs an unbatched GEMM with a GELU matrix and "
             "no bias gradient (nor, backward, a bias)");
  if (g.ldAux < g.n)
    fail(op, "the GELU matrix's leading dimension is less than N");
}

bool gemm(const Gemm &g, cudaStream_t stream, std::string_view op) {
  if (g.biasGrad && (g.bias || g.batch != 1))
    detail::fail(op, "a bias gradient needs an unbatched GEMM without a bias");
  if (g.gelu != Gelu::None)
    checkGelu(g, op);
  if (g.m == 0 || g.n == 0 || g.batch == 0) // layout() would make it 1
    return !g.biasGrad; // empty: the separate path handles the sum
  if (g.k == 0 && declinable(g))
    return false; // an empty reduction: the separate path handles it
  Plan &p = plan(g, stream, op);
  if (!p.found)
    return false;
  setEpiloguePointers(p.desc, g);
  checkLt(cublasLtMatmul(gHandle, p.desc, &g.alpha, g.b, p.la, g.a, p.lb,
                         &g.beta, g.c, p.lc, g.c, p.lc, &p.algo, gWorkspace,
                         kWorkspaceBytes, stream),
          "cublasLtMatmul");
  return true;
}

} // namespace detail

} // namespace ampc::cuda

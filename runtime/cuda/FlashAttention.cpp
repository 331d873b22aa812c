//===- FlashAttention.cpp - Attention on cuDNN's fused flash SDPA ---------===//
//
// cuDNN's fused scaled-dot-product attention through its frontend's graph
// API: q, k, v, o in f16 or bf16, FP32 softmax and statistics, causal masks
// top-left aligned (key j > query i masked: set_causal_mask, as ours and
// PyTorch's is_causal), grouped-query attention as fewer heads on k and v
// (the query heads a kv head serves are consecutive, as cuDNN expects).
//
// The backward op gets q, k, v and g only (runtime/kernels/Ops.def), so it
// runs the forward again with its statistics (O and the per-row log-sum-exp
// into scratch) before cuDNN's backward: traffic O(T * D) per row, no IR
// change. packed_attention_stats and scaled_dot_product_attention_stats
// (graph-save-attention-stats) write them in their forward instead, and
// their backward reads them. The backward asks for cuDNN's deterministic algorithm first (no
// atomics in dQ, as conv2d's algorithms) and takes the default one where
// that is not supported.
//
// Graphs are built once per shape, dtype, scale and mask, then cached; the
// workspace is the library's scratch memory, so after the warm-up step a
// call allocates nothing.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/FlashAttention.h"
#include "runtime/cuda/Common.h"
#include "runtime/cuda/CudnnHandle.h"
#include "runtime/kernels/AttentionPath.h"
#include "runtime/kernels/EnvSwitch.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#ifndef AMPC_HAVE_CUDNN_FRONTEND
#define AMPC_HAVE_CUDNN_FRONTEND 0
#endif

#if AMPC_HAVE_CUDNN_FRONTEND
#include <cudnn_frontend.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#endif

namespace ampc::cuda::detail {

AttentionPath attentionPath() {
  // The values in AttentionPath's order.
  return AttentionPath(
      kernels::envChoice("AMPC_CUDA_ATTENTION", {"auto", "math", "flash"}));
}

bool flashCompiled() { return AMPC_HAVE_CUDNN_FRONTEND != 0; }

namespace {

// False (the math path), or with AMPC_CUDA_ATTENTION=flash an error. An
// eligible call that still takes the math path (no frontend in the build,
// cuDNN declining, an unaligned tensor) says so once per op and reason:
// it costs the step the B x H x T x T scores, and nothing else would show.
bool refuse(AttentionPath mode, std::string_view op, const std::string &why) {
  if (mode == AttentionPath::Flash)
    fail(op, "AMPC_CUDA_ATTENTION=flash: " + why);
  if (why.rfind("not eligible", 0) != 0) {
    static std::mutex mu;
    static std::set<std::string> said;
    std::lock_guard<std::mutex> lock(mu);
    if (said.insert(std::string(op) + why).second)
      std::fprintf(stderr,
                   "note: %.*s: the math path, not cuDNN's flash attention: "
                   "%s\n",
                   int(op.size()), op.data(), why.c_str());
  }
  return false;
}

// cuDNN's [B, H, T, D] view of q [.., Hq, T, D], k and v [.., Hkv, S, *].
// |packed| (packed_attention): q, k, v, dq, dk, dv are the thirds of one
// [B, T, 3, H, D] tensor and o, g are [B, T, H, D], all as strided views.
struct Shape {
  int64_t b = 1, hq = 1, hkv = 1, t, s, d, e;
  bool packed = false;
};

Shape shapeOf(const TensorRef &q, const TensorRef &k, const TensorRef &v) {
  int r = q.rank;
  Shape s;
  s.t = q.shape[r - 2], s.d = q.shape[r - 1];
  s.s = k.shape[r - 2], s.e = v.shape[r - 1];
  if (r >= 3)
    s.hq = q.shape[r - 3], s.hkv = k.shape[r - 3];
  for (int i = 0; i < r - 3; ++i)
    s.b *= q.shape[i];
  return s;
}

// qkv [B, T, 3 * heads * D] as packed q, k, v of [B, heads, T, D].
Shape packedShape(const TensorRef &qkv, int64_t heads) {
  Shape s;
  s.b = qkv.shape[0], s.hq = s.hkv = heads, s.t = s.s = qkv.shape[1];
  s.d = s.e = qkv.shape[2] / (3 * heads);
  s.packed = true;
  return s;
}

// The shared eligibility rule plus what only the run time sees: cuDNN
// needs 16-byte aligned tensors.
std::string ineligible(const TensorRef &q, std::initializer_list<DType> others,
                       std::initializer_list<const TensorRef *> refs,
                       const Shape &s, bool masked) {
  if (!kernels::flashAttentionEligible(q.dtype, others, s.d, s.e, masked))
    return "not eligible (needs f16/bf16 q, k, v and results of one type, "
           "head dims multiples of 8 up to 128, no mask tensor)";
  for (const TensorRef *t : refs)
    if (t && reinterpret_cast<uintptr_t>(t->data) % 16)
      return "a tensor is not 16-byte aligned";
  return {};
}

// ineligible() for the ops with saved statistics: also |stats| f32
// [B, heads, T] and 16-byte aligned.
std::string statsIneligible(const TensorRef &qkv,
                            std::initializer_list<DType> others,
                            std::initializer_list<const TensorRef *> refs,
                            const TensorRef &stats, const Shape &s) {
  std::string why = ineligible(qkv, others, refs, s, false);
  if (!why.empty())
    return why;
  if (stats.dtype != DType::F32 || stats.numel() != s.b * s.hq * s.t)
    return "the statistics are not f32 [B, heads, T]";
  if (reinterpret_cast<uintptr_t>(stats.data) % 16)
    return "a tensor is not 16-byte aligned";
  return {};
}

} // namespace

#if !AMPC_HAVE_CUDNN_FRONTEND

bool flashForward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                  const TensorRef &o, float, bool, bool masked, cudaStream_t,
                  std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  std::string why = ineligible(q, {k.dtype, v.dtype, o.dtype}, {},
                               shapeOf(q, k, v), masked);
  return refuse(mode, op, why.empty() ? "built without cuDNN's frontend" : why);
}

bool flashBackward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                   const TensorRef &g, const TensorRef *, const TensorRef *,
                   const TensorRef *, float, bool, bool masked, cudaStream_t,
                   std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  std::string why = ineligible(q, {k.dtype, v.dtype, g.dtype}, {},
                               shapeOf(q, k, v), masked);
  return refuse(mode, op, why.empty() ? "built without cuDNN's frontend" : why);
}

bool flashPackedForward(const TensorRef &qkv, const TensorRef &o,
                        int64_t heads, float, bool, cudaStream_t,
                        std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  std::string why =
      ineligible(qkv, {o.dtype}, {}, packedShape(qkv, heads), false);
  return refuse(mode, op, why.empty() ? "built without cuDNN's frontend" : why);
}

bool flashPackedBackward(const TensorRef &qkv, const TensorRef &g,
                         const TensorRef &dqkv, int64_t heads, float, bool,
                         cudaStream_t, std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  std::string why = ineligible(qkv, {g.dtype, dqkv.dtype}, {},
                               packedShape(qkv, heads), false);
  return refuse(mode, op, why.empty() ? "built without cuDNN's frontend" : why);
}

bool flashPackedForwardStats(const TensorRef &qkv, const TensorRef &o,
                             const TensorRef &stats, int64_t heads, float,
                             bool, cudaStream_t, std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  std::string why = statsIneligible(qkv, {o.dtype}, {}, stats,
                                    packedShape(qkv, heads));
  return refuse(mode, op, why.empty() ? "built without cuDNN's frontend" : why);
}

bool flashPackedBackwardSaved(const TensorRef &qkv, const TensorRef &o,
                              const TensorRef &stats, const TensorRef &g,
                              const TensorRef &dqkv, int64_t heads, float,
                              bool, cudaStream_t, std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  std::string why = statsIneligible(qkv, {o.dtype, g.dtype, dqkv.dtype}, {},
                                    stats, packedShape(qkv, heads));
  return refuse(mode, op, why.empty() ? "built without cuDNN's frontend" : why);
}

bool flashForwardStats(const TensorRef &q, const TensorRef &k,
                       const TensorRef &v, const TensorRef &o,
                       const TensorRef &stats, float, bool, cudaStream_t,
                       std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  std::string why = statsIneligible(q, {k.dtype, v.dtype, o.dtype}, {}, stats,
                                    shapeOf(q, k, v));
  return refuse(mode, op, why.empty() ? "built without cuDNN's frontend" : why);
}

bool flashBackwardSaved(const TensorRef &q, const TensorRef &k,
                        const TensorRef &v, const TensorRef &o,
                        const TensorRef &stats, const TensorRef &g,
                        const TensorRef &dq, const TensorRef &dk,
                        const TensorRef &dv, float, bool, cudaStream_t,
                        std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  std::string why = statsIneligible(
      q, {k.dtype, v.dtype, o.dtype, g.dtype, dq.dtype, dk.dtype, dv.dtype},
      {}, stats, shapeOf(q, k, v));
  return refuse(mode, op, why.empty() ? "built without cuDNN's frontend" : why);
}

#else

namespace {

namespace fe = cudnn_frontend;
using TensorAttrs = std::shared_ptr<fe::graph::Tensor_attributes>;

enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kG, kDQ, kDK, kDV };
enum Pass : int64_t { kForward, kForwardStats, kBackward };

struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace = 0;
  bool usable = false;
  std::string why; // cuDNN's reason when not usable
};

fe::DataType_t ioType(DType t) {
  return t == DType::F16 ? fe::DataType_t::HALF : fe::DataType_t::BFLOAT16;
}

// The strides of tensor |uid| [b, h, t, d]: contiguous, or in the packed
// layouts (q, k, v and their gradients rows of 3 * h * d in [B, T, 3, H,
// D]; o and g rows of h * d in [B, T, H, D]), as llm.c's cuDNN attention.
std::vector<int64_t> strides(Uid uid, bool packed, int64_t h, int64_t t,
                             int64_t d) {
  if (!packed)
    return {h * t * d, t * d, d, 1};
  int64_t row = (uid == kO || uid == kG) ? h * d : 3 * h * d;
  return {t * row, d, row, 1};
}

// A [b, h, t, d] tensor of the graph's io type.
TensorAttrs input(fe::graph::Graph &g, const char *name, Uid uid, int64_t b,
                  int64_t h, int64_t t, int64_t d, bool packed) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({b, h, t, d})
                      .set_stride(strides(uid, packed, h, t, d)));
}

void output(const TensorAttrs &x, Uid uid, int64_t b, int64_t h, int64_t t,
            int64_t d, bool packed) {
  x->set_output(true).set_uid(uid).set_dim({b, h, t, d}).set_stride(
      strides(uid, packed, h, t, d));
}

// The FP32 log-sum-exp per query row, [b, h, t, 1].
void statsLayout(fe::graph::Tensor_attributes &x, const Shape &s) {
  x.set_uid(kStats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim({s.b, s.hq, s.t, 1})
      .set_stride({s.hq * s.t, s.t, 1, 1});
}

std::shared_ptr<fe::graph::Graph> newGraph(DType t) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(ioType(t))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

// |impl|: AUTO lets the frontend pick (cuDNN 9.19 takes its UNIFIED node
// for non-causal calls, COMPOSITE for causal ones); COMPOSITE is the retry.
void buildForward(std::shared_ptr<fe::graph::Graph> g, const Shape &s,
                  float scale, bool causal, bool stats,
                  fe::AttentionImplementation_t impl) {
  TensorAttrs q = input(*g, "q", kQ, s.b, s.hq, s.t, s.d, s.packed);
  TensorAttrs k = input(*g, "k", kK, s.b, s.hkv, s.s, s.d, s.packed);
  TensorAttrs v = input(*g, "v", kV, s.b, s.hkv, s.s, s.e, s.packed);
  auto attrs = fe::graph::SDPA_attributes()
                   .set_name("ampc_flash_forward")
                   .set_generate_stats(stats)
                   .set_causal_mask(causal)
                   .set_attn_scale(scale)
                   .set_implementation(impl);
  auto [o, lse] = g->sdpa(q, k, v, attrs);
  output(o, kO, s.b, s.hq, s.t, s.e, s.packed);
  if (stats) {
    lse->set_output(true);
    statsLayout(*lse, s);
  }
}

void buildBackward(std::shared_ptr<fe::graph::Graph> g, const Shape &s,
                   float scale, bool causal, bool deterministic) {
  TensorAttrs q = input(*g, "q", kQ, s.b, s.hq, s.t, s.d, s.packed);
  TensorAttrs k = input(*g, "k", kK, s.b, s.hkv, s.s, s.d, s.packed);
  TensorAttrs v = input(*g, "v", kV, s.b, s.hkv, s.s, s.e, s.packed);
  TensorAttrs o = input(*g, "o", kO, s.b, s.hq, s.t, s.e, s.packed);
  TensorAttrs gy = input(*g, "g", kG, s.b, s.hq, s.t, s.e, s.packed);
  fe::graph::Tensor_attributes lseAttrs;
  lseAttrs.set_name("stats");
  statsLayout(lseAttrs, s);
  TensorAttrs lse = g->tensor(lseAttrs);
  auto attrs = fe::graph::SDPA_backward_attributes()
                   .set_name("ampc_flash_backward")
                   .set_causal_mask(causal)
                   .set_attn_scale(scale)
                   .set_deterministic_algorithm(deterministic);
  auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, gy, lse, attrs);
  output(dq, kDQ, s.b, s.hq, s.t, s.d, s.packed);
  output(dk, kDK, s.b, s.hkv, s.s, s.d, s.packed);
  output(dv, kDV, s.b, s.hkv, s.s, s.e, s.packed);
}

// Validation, heuristics (mode A), cuDNN's support check and the plan;
// the message of the first step that fails, or "".
std::string finishGraph(Plan &p, std::shared_ptr<fe::graph::Graph> g,
                        cudnnHandle_t h) {
  fe::error_t e = g->validate();
  if (e.is_good())
    e = g->build_operation_graph(h);
  if (e.is_good())
    e = g->create_execution_plans({fe::HeurMode_t::A});
  if (e.is_good())
    e = g->check_support();
  if (e.is_good())
    e = g->build_plans();
  int64_t ws = 0;
  if (e.is_good())
    e = g->get_workspace_size(ws);
  if (e.is_bad())
    return e.get_message().empty() ? "cuDNN refused the graph"
                                   : e.get_message();
  p.graph = std::move(g);
  p.workspace = ws;
  p.usable = true;
  return {};
}

// A new graph of type |t| that |build| fills, then finishGraph, with an
// exception (the frontend's: sdpa() throws when no implementation takes
// the attributes; or an allocation's) as the reason instead of a plan
// cached unusable for no stated reason.
template <class Build>
std::string finish(Plan &p, DType t, cudnnHandle_t h, Build build) {
  try {
    auto g = newGraph(t);
    build(g);
    return finishGraph(p, std::move(g), h);
  } catch (const std::exception &e) {
    return std::string("cuDNN frontend: ") + e.what();
  }
}

// The largest workspace a deterministic backward may take. Below cuDNN 9.25
// on sm_90 the deterministic flash backward materialises dP (B x H x T x S
// halves: 192 MiB for GPT-2 small at 8 x 1024 tokens, 8 GiB at 8 x 32 heads
// x 4096), so past this the non-deterministic backward is taken instead.
constexpr int64_t kDeterministicWorkspace = int64_t(512) << 20;

// AMPC_CUDA_ATTENTION_BACKWARD (read at each call): unset, "" or
// "deterministic" tries the deterministic backward first, as above; "fast"
// takes the non-deterministic one (PyTorch's choice: dQ accumulated with
// atomics, no dP in memory), for timing what determinism costs.
bool deterministicFirst() {
  return kernels::envChoice("AMPC_CUDA_ATTENTION_BACKWARD",
                            {"deterministic", "fast"}) == 0;
}

using Key = std::array<int64_t, 13>;

// The cached plan of |pass| (cudnnMutex() held); made on first use, outside
// stream capture only.
Plan &plan(Pass pass, DType t, const Shape &s, float scale, bool causal,
           cudaStream_t stream, std::string_view op) {
  uint32_t scaleBits = 0;
  std::memcpy(&scaleBits, &scale, sizeof scaleBits);
  bool deterministic = pass == kBackward && deterministicFirst();
  Key key{int64_t(pass), int64_t(t), s.b, s.hq,  s.hkv,         s.t,
          s.s,           s.d,        s.e, causal, int64_t(scaleBits),
          s.packed,      deterministic};
  static std::map<Key, Plan> cache;
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  failIfCapturing(stream, op, "a cuDNN attention graph cannot be built");
  Plan &p = cache[key];
  cudnnHandle_t h = cudnnHandle();
  if (!h) {
    p.why = "cuDNN could not be initialised";
    return p;
  }
  if (pass != kBackward) {
    using Impl = fe::AttentionImplementation_t;
    for (Impl impl : {Impl::AUTO, Impl::COMPOSITE}) {
      // The frontend's choice first; if cuDNN has no engine for it (or the
      // choice was COMPOSITE already and failed), COMPOSITE once more costs
      // only a plan build, once per shape.
      Plan tried;
      tried.why = finish(tried, t, h, [&](auto &g) {
        buildForward(g, s, scale, causal, pass == kForwardStats, impl);
      });
      if (impl == Impl::AUTO || tried.usable)
        p = std::move(tried);
      if (p.usable)
        break;
    }
    return p;
  }
  p.why = finish(p, t, h, [&](auto &g) {
    buildBackward(g, s, scale, causal, deterministic);
  });
  if (deterministic &&
      (!p.usable || p.workspace > kDeterministicWorkspace)) {
    Plan fallback;
    fallback.why = finish(fallback, t, h, [&](auto &g) {
      buildBackward(g, s, scale, causal, /*deterministic=*/false);
    });
    if (fallback.usable || !p.usable) { // else keep the deterministic plan
      // Once per shape (plans are cached): a run that asked for nothing
      // would otherwise not know its backward is not deterministic.
      if (fallback.usable) {
        std::string why = p.usable ? "needs " +
                                         std::to_string(p.workspace >> 20) +
                                         " MiB of workspace (more than 512)"
                                   : "was refused: " + p.why;
        std::fprintf(stderr,
                     "note: %.*s: cuDNN's non-deterministic flash backward "
                     "for this shape: the deterministic one %s\n",
                     int(op.size()), op.data(), why.c_str());
      }
      p = std::move(fallback);
    }
  }
  return p;
}

constexpr size_t align256(size_t n) { return (n + 255) & ~size_t(255); }

// What a backward runs besides its tensors (cudnnMutex() held): the forward
// again with its statistics, then cuDNN's backward; and the scratch they
// share before their workspace, O and the FP32 log-sum-exp of each row.
struct BackwardPlans {
  Plan *fwd = nullptr, *bwd = nullptr;
  size_t oBytes = 0, statsBytes = 0, workspace = 0;
  std::string why; // set when a plan is unusable
};

BackwardPlans backwardPlans(DType t, const Shape &s, float scale, bool causal,
                            cudaStream_t stream, std::string_view op) {
  BackwardPlans b;
  b.fwd = &plan(kForwardStats, t, s, scale, causal, stream, op);
  if (!b.fwd->usable) {
    b.why = "cuDNN: " + b.fwd->why;
    return b;
  }
  b.bwd = &plan(kBackward, t, s, scale, causal, stream, op);
  if (!b.bwd->usable) {
    b.why = "cuDNN: " + b.bwd->why;
    return b;
  }
  b.oBytes = align256(size_t(s.b * s.hq * s.t * s.e) * dtypeSize(t));
  b.statsBytes = align256(size_t(s.b * s.hq * s.t) * sizeof(float));
  b.workspace = size_t(std::max(b.fwd->workspace, b.bwd->workspace));
  return b;
}

void execute(const Plan &p, std::unordered_map<int64_t, void *> &pack,
             void *workspace, cudaStream_t stream, std::string_view op) {
  cudnnHandle_t h = cudnnHandle(); // made with the plan
  cudnnStatus_t st = cudnnSetStream(h, stream);
  if (st != CUDNN_STATUS_SUCCESS)
    fail(op, std::string("cudnnSetStream: ") + cudnnGetErrorString(st));
  fe::error_t e = p.graph->execute(h, pack, workspace);
  if (e.is_bad())
    fail(op, "cuDNN flash attention: " + e.get_message());
}

} // namespace

// The forward; given |stats|, it also writes the softmax statistics there
// (the kForwardStats plan) for the backward to read.
static bool forward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                    const TensorRef &o, const TensorRef *stats, float scale,
                    bool causal, bool masked, cudaStream_t stream,
                    std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  Shape s = shapeOf(q, k, v);
  std::string why =
      stats ? statsIneligible(q, {k.dtype, v.dtype, o.dtype}, {&q, &k, &v, &o},
                              *stats, s)
            : ineligible(q, {k.dtype, v.dtype, o.dtype}, {&q, &k, &v, &o}, s,
                         masked);
  if (!why.empty())
    return refuse(mode, op, why);
  std::lock_guard<std::mutex> lock(cudnnMutex());
  Plan &p = plan(stats ? kForwardStats : kForward, q.dtype, s, scale, causal,
                 stream, op);
  if (!p.usable)
    return refuse(mode, op, "cuDNN: " + p.why);
  void *ws = p.workspace ? scratch(size_t(p.workspace), op, stream) : nullptr;
  std::unordered_map<int64_t, void *> pack{
      {kQ, q.data}, {kK, k.data}, {kV, v.data}, {kO, o.data}};
  if (stats)
    pack[kStats] = stats->data;
  execute(p, pack, ws, stream, op);
  return true;
}

bool flashForward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                  const TensorRef &o, float scale, bool causal, bool masked,
                  cudaStream_t stream, std::string_view op) {
  return forward(q, k, v, o, nullptr, scale, causal, masked, stream, op);
}

bool flashForwardStats(const TensorRef &q, const TensorRef &k,
                       const TensorRef &v, const TensorRef &o,
                       const TensorRef &stats, float scale, bool causal,
                       cudaStream_t stream, std::string_view op) {
  return forward(q, k, v, o, &stats, scale, causal, false, stream, op);
}

bool flashBackwardSaved(const TensorRef &q, const TensorRef &k,
                        const TensorRef &v, const TensorRef &o,
                        const TensorRef &stats, const TensorRef &g,
                        const TensorRef &dq, const TensorRef &dk,
                        const TensorRef &dv, float scale, bool causal,
                        cudaStream_t stream, std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  Shape s = shapeOf(q, k, v);
  // The forward's conditions (flashForwardStats) and this call's own.
  std::string why = statsIneligible(
      q, {k.dtype, v.dtype, o.dtype, g.dtype, dq.dtype, dk.dtype, dv.dtype},
      {&q, &k, &v, &o, &g, &dq, &dk, &dv}, stats, s);
  if (!why.empty())
    return refuse(mode, op, why);
  std::lock_guard<std::mutex> lock(cudnnMutex());
  BackwardPlans b = backwardPlans(q.dtype, s, scale, causal, stream, op);
  if (!b.why.empty())
    return refuse(mode, op, b.why);
  void *workspace =
      b.bwd->workspace ? scratch(size_t(b.bwd->workspace), op, stream)
                       : nullptr;
  std::unordered_map<int64_t, void *> bpack{
      {kQ, q.data},         {kK, k.data},   {kV, v.data},
      {kO, o.data},         {kG, g.data},   {kStats, stats.data},
      {kDQ, dq.data},       {kDK, dk.data}, {kDV, dv.data}};
  execute(*b.bwd, bpack, workspace, stream, op);
  return true;
}

bool flashBackward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                   const TensorRef &g, const TensorRef *dq,
                   const TensorRef *dk, const TensorRef *dv, float scale,
                   bool causal, bool masked, cudaStream_t stream,
                   std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  Shape s = shapeOf(q, k, v);
  DType t = q.dtype;
  std::string why = ineligible(
      q, {k.dtype, v.dtype, g.dtype, dq ? dq->dtype : t, dk ? dk->dtype : t,
          dv ? dv->dtype : t},
      {&q, &k, &v, &g, dq, dk, dv}, s, masked);
  if (!why.empty())
    return refuse(mode, op, why);
  std::lock_guard<std::mutex> lock(cudnnMutex());
  BackwardPlans b = backwardPlans(t, s, scale, causal, stream, op);
  if (!b.why.empty())
    return refuse(mode, op, b.why);
  // Scratch: O, the statistics, the gradients nobody asked for, then the
  // larger of the two workspaces.
  size_t es = dtypeSize(t);
  size_t dqBytes = dq ? 0 : align256(size_t(q.numel()) * es);
  size_t dkBytes = dk ? 0 : align256(size_t(k.numel()) * es);
  size_t dvBytes = dv ? 0 : align256(size_t(v.numel()) * es);
  size_t fixed = b.oBytes + b.statsBytes + dqBytes + dkBytes + dvBytes;
  size_t ws = b.workspace;
  char *base = static_cast<char *>(scratch(fixed + ws, op, stream));
  char *o = base, *lse = o + b.oBytes, *spare = lse + b.statsBytes;
  void *dqPtr = dq ? dq->data : spare;
  void *dkPtr = dk ? dk->data : spare + dqBytes;
  void *dvPtr = dv ? dv->data : spare + dqBytes + dkBytes;
  void *workspace = ws ? base + fixed : nullptr;
  std::unordered_map<int64_t, void *> fpack{
      {kQ, q.data}, {kK, k.data}, {kV, v.data}, {kO, o}, {kStats, lse}};
  execute(*b.fwd, fpack, workspace, stream, op);
  std::unordered_map<int64_t, void *> bpack{
      {kQ, q.data}, {kK, k.data}, {kV, v.data}, {kO, o},      {kG, g.data},
      {kStats, lse}, {kDQ, dqPtr}, {kDK, dkPtr}, {kDV, dvPtr}};
  execute(*b.bwd, bpack, workspace, stream, op);
  return true;
}

// The packed forward; given |stats|, it also writes the softmax statistics
// there (the kForwardStats plan) for the backward to read.
static bool packedForward(const TensorRef &qkv, const TensorRef &o,
                          const TensorRef *stats, int64_t heads, float scale,
                          bool causal, cudaStream_t stream,
                          std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  Shape s = packedShape(qkv, heads);
  std::string why =
      stats ? statsIneligible(qkv, {o.dtype}, {&qkv, &o}, *stats, s)
            : ineligible(qkv, {o.dtype}, {&qkv, &o}, s, false);
  if (!why.empty())
    return refuse(mode, op, why);
  std::lock_guard<std::mutex> lock(cudnnMutex());
  Plan &p = plan(stats ? kForwardStats : kForward, qkv.dtype, s, scale, causal,
                 stream, op);
  if (!p.usable)
    return refuse(mode, op, "cuDNN: " + p.why);
  void *ws = p.workspace ? scratch(size_t(p.workspace), op, stream) : nullptr;
  // k and v start one and two E-element rows into qkv's rows (16-byte
  // aligned: D is a multiple of 8 half elements).
  char *base = static_cast<char *>(qkv.data);
  size_t part = size_t(s.hq * s.d) * dtypeSize(qkv.dtype);
  std::unordered_map<int64_t, void *> pack{{kQ, base},
                                           {kK, base + part},
                                           {kV, base + 2 * part},
                                           {kO, o.data}};
  if (stats)
    pack[kStats] = stats->data;
  execute(p, pack, ws, stream, op);
  return true;
}

bool flashPackedForward(const TensorRef &qkv, const TensorRef &o,
                        int64_t heads, float scale, bool causal,
                        cudaStream_t stream, std::string_view op) {
  return packedForward(qkv, o, nullptr, heads, scale, causal, stream, op);
}

bool flashPackedBackward(const TensorRef &qkv, const TensorRef &g,
                         const TensorRef &dqkv, int64_t heads, float scale,
                         bool causal, cudaStream_t stream,
                         std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  Shape s = packedShape(qkv, heads);
  DType t = qkv.dtype;
  std::string why =
      ineligible(qkv, {g.dtype, dqkv.dtype}, {&qkv, &g, &dqkv}, s, false);
  if (!why.empty())
    return refuse(mode, op, why);
  std::lock_guard<std::mutex> lock(cudnnMutex());
  BackwardPlans b = backwardPlans(t, s, scale, causal, stream, op);
  if (!b.why.empty())
    return refuse(mode, op, b.why);
  // Scratch: O ([B, T, H, D], g's layout), the statistics, the larger
  // workspace.
  size_t fixed = b.oBytes + b.statsBytes;
  char *sbase = static_cast<char *>(scratch(fixed + b.workspace, op, stream));
  char *o = sbase, *lse = o + b.oBytes;
  void *workspace = b.workspace ? sbase + fixed : nullptr;
  char *in = static_cast<char *>(qkv.data), *d = static_cast<char *>(dqkv.data);
  size_t part = size_t(s.hq * s.d) * dtypeSize(t);
  std::unordered_map<int64_t, void *> fpack{{kQ, in},
                                            {kK, in + part},
                                            {kV, in + 2 * part},
                                            {kO, o},
                                            {kStats, lse}};
  execute(*b.fwd, fpack, workspace, stream, op);
  std::unordered_map<int64_t, void *> bpack{
      {kQ, in},         {kK, in + part}, {kV, in + 2 * part},
      {kO, o},          {kG, g.data},    {kStats, lse},
      {kDQ, d},         {kDK, d + part}, {kDV, d + 2 * part}};
  execute(*b.bwd, bpack, workspace, stream, op);
  return true;
}

bool flashPackedForwardStats(const TensorRef &qkv, const TensorRef &o,
                             const TensorRef &stats, int64_t heads,
                             float scale, bool causal, cudaStream_t stream,
                             std::string_view op) {
  return packedForward(qkv, o, &stats, heads, scale, causal, stream, op);
}

bool flashPackedBackwardSaved(const TensorRef &qkv, const TensorRef &o,
                              const TensorRef &stats, const TensorRef &g,
                              const TensorRef &dqkv, int64_t heads,
                              float scale, bool causal, cudaStream_t stream,
                              std::string_view op) {
  AttentionPath mode = attentionPath();
  if (mode == AttentionPath::Math)
    return false;
  Shape s = packedShape(qkv, heads);
  DType t = qkv.dtype;
  // The forward's conditions (flashPackedForwardStats) and this call's own.
  std::string why = statsIneligible(qkv, {o.dtype, g.dtype, dqkv.dtype},
                                    {&qkv, &o, &g, &dqkv}, stats, s);
  if (!why.empty())
    return refuse(mode, op, why);
  std::lock_guard<std::mutex> lock(cudnnMutex());
  BackwardPlans b = backwardPlans(t, s, scale, causal, stream, op);
  if (!b.why.empty())
    return refuse(mode, op, b.why);
  void *workspace =
      b.bwd->workspace ? scratch(size_t(b.bwd->workspace), op, stream)
                       : nullptr;
  char *in = static_cast<char *>(qkv.data), *d = static_cast<char *>(dqkv.data);
  size_t part = size_t(s.hq * s.d) * dtypeSize(t);
  std::unordered_map<int64_t, void *> bpack{
      {kQ, in},         {kK, in + part},     {kV, in + 2 * part},
      {kO, o.data},     {kG, g.data},        {kStats, stats.data},
      {kDQ, d},         {kDK, d + part},     {kDV, d + 2 * part}};
  execute(*b.bwd, bpack, workspace, stream, op);
  return true;
}

#endif // AMPC_HAVE_CUDNN_FRONTEND

} // namespace ampc::cuda::detail

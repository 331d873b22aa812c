//===- DeviceModel.cpp - Storage, staging, graphs, checkpoints ------------===//
//
// The ordering and synchronisation here were debugged on the device: the
// comments at each wait say what it protects. Change them with care.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceModel.h"
#include "runtime/kernels/EnvSwitch.h"
#include "runtime/numerics/Init.h"
#include "runtime/numerics/Philox.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace ampc::cuda {

// The model's tiny kernels (DeviceModelKernels.cu), each enqueued on
// |stream|.
namespace detail {
void launchAccumulate(float *g, const float *x, int64_t n, int grid,
                      cudaStream_t stream);
void launchAdvance(int64_t *counter, cudaStream_t stream);
void launchAddLoss(float *acc, const float *loss, cudaStream_t stream);
void launchAddLoss(float *acc, const __half *loss, cudaStream_t stream);
void launchAddLoss(float *acc, const __nv_bfloat16 *loss, cudaStream_t stream);
void launchCastToHalf(const float *w, void *h, int64_t n, bool bf16, int grid,
                      cudaStream_t stream);
void launchWidenGrad(float *g, const void *h, int64_t n, bool bf16, bool add,
                     int grid, cudaStream_t stream);
} // namespace detail

namespace {

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

size_t bytesOf(const rt::TensorInfo &t) {
  return size_t(numel(t.shape)) * dtypeSize(t.dtype);
}

} // namespace

DeviceModel::DeviceModel(rt::ModelSpec spec, std::vector<Constant> constants,
                         bool dropout)
    : SpecModel(std::move(spec)), hostConstants_(std::move(constants)),
      dropout_(dropout) {
  size_t n = spec_.params.size();
  w_.assign(n, nullptr);
  g_.assign(n, nullptr);
  m_.assign(n, nullptr);
  v_.assign(n, nullptr);
  // In reverse parameter order, the order the backward finishes the
  // gradients and DataParallel buckets them: a bucket of tensors whose
  // sizes are multiples of 64 floats (all of GPT-2's) is one range of the
  // gradient block, which NCCL reduces in place (GradBucketer's adjacency
  // check) instead of through a staging copy each way. The cost report
  // (compiler/cost/DataParallelCost.cpp) assumes this padding.
  offset_.assign(n, 0);
  for (size_t p = n; p-- > 0;) {
    offset_[p] = total_;
    // 256-byte aligned tensors (fused kernels' packed accesses rely on it:
    // compiler/targets/cuda/CudaEmitBlock.cpp, knownAlignment).
    total_ += (numel(spec_.params[p].shape) + 63) / 64 * 64;
  }
  // Half weight copies: 256-byte aligned too (128 elements).
  for (const rt::ParamInfo &p : spec_.params) {
    halfOffset_.push_back(halfTotal_);
    if (p.halfCopy)
      halfTotal_ += (numel(p.shape) + p.halfPadding + 127) / 128 * 128;
  }
  for (const rt::ParamInfo &p : spec_.params) {
    halfGradOffset_.push_back(halfGradTotal_);
    if (p.gradType != rt::DType::F32)
      halfGradTotal_ += (numel(p.shape) + 127) / 128 * 128;
  }
  // AMPC_CUDA_HALF_GRADS=widen: widened as they are stored, as the casts
  // did before train-half-grads (A/B timing; bench/gpu.sh's safe paths).
  floatGrads_ = spec_.config.accumSteps > 1 ||
                kernels::envChoice("AMPC_CUDA_HALF_GRADS",
                                   {"epilogue", "widen"}) == 1;
  for (const rt::ParamInfo &b : spec_.buffers) {
    bufOffset_.push_back(bufTotal_);
    bufTotal_ += (numel(b.shape) + 63) / 64 * 64;
  }
  for (const rt::TensorInfo &t : spec_.inputs)
    inputBytes_.push_back(bytesOf(t));
  for (const rt::TensorInfo &t : spec_.outputs)
    outputBytes_.push_back(bytesOf(t));
}

// Errors are ignored: at exit the CUDA runtime may already be unloaded.
DeviceModel::~DeviceModel() {
  if (!ready_)
    return;
  for (cudaGraphExec_t e : {fbExec_[0], fbExec_[1], stepExec_})
    if (e)
      cudaGraphExecDestroy(e);
  epilogue_.reset();
  for (float *b : blocks_)
    cudaFree(b);
  cudaFree(bufBlock_);
  cudaFree(halfBlock_);
  cudaFree(halfGradBlock_);
  cudaFree(arena_);
  cudaFree(state_);
  cudaFree(dropStep_);
  cudaFreeHost(pinnedReport_);
  for (size_t i = 0; i < din_.size(); ++i) {
    cudaFree(din_[i]);
    cudaFreeHost(hin_[0][i]);
    cudaFreeHost(hin_[1][i]);
  }
  for (void *c : constants_)
    cudaFree(c);
  for (cudaEvent_t e : {copied_[0], copied_[1], consumed_, stepDone_})
    if (e)
      cudaEventDestroy(e);
  for (cudaEvent_t e : readyEvents_)
    cudaEventDestroy(e);
  for (cudaStream_t s : {copyStream_, stream_})
    if (s)
      cudaStreamDestroy(s);
}

// Device memory, streams, graphs; made on first use (never in a static
// constructor).
void DeviceModel::setup() {
  if (ready_)
    return;
  ready_ = true;
  if (!deviceAvailable()) {
    std::fprintf(stderr, "error: no CUDA device (this binary was compiled "
                         "with --target=cuda)\n");
    std::exit(1);
  }
  cuda::initialize();
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
  check(cudaStreamCreateWithFlags(&copyStream_, cudaStreamNonBlocking),
        "stream");
  for (cudaEvent_t *e : {&copied_[0], &copied_[1], &consumed_, &stepDone_})
    check(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "event");
  // Masters, gradients, moments (SGD has one).
  for (int b = 0; b < (sgd() ? 3 : 4); ++b)
    check(cudaMalloc(&blocks_[b], std::max<int64_t>(total_, 1) * sizeof(float)),
          "cudaMalloc(params)");
  for (size_t p = 0; p < spec_.params.size(); ++p) {
    w_[p] = blocks_[0] + offset_[p];
    g_[p] = blocks_[1] + offset_[p];
    m_[p] = blocks_[2] + offset_[p];
    v_[p] = sgd() ? nullptr : blocks_[3] + offset_[p];
  }
  check(cudaMalloc(&bufBlock_, std::max<int64_t>(bufTotal_, 1) * sizeof(float)),
        "cudaMalloc(buffers)");
  h_.assign(spec_.params.size(), nullptr);
  if (halfTotal_ > 0) {
    check(cudaMalloc(&halfBlock_, halfTotal_ * 2), "cudaMalloc(half weights)");
    // The padding rows (rt::ParamInfo::halfPadding) stay as zeroed here.
    check(cudaMemset(halfBlock_, 0, halfTotal_ * 2), "zero half weights");
    for (size_t p = 0; p < spec_.params.size(); ++p)
      if (spec_.params[p].halfCopy)
        h_[p] = static_cast<char *>(halfBlock_) + halfOffset_[p] * 2;
  }
  hg_.assign(spec_.params.size(), nullptr);
  if (halfGradTotal_ > 0) {
    check(cudaMalloc(&halfGradBlock_, halfGradTotal_ * 2),
          "cudaMalloc(half gradients)");
    check(cudaMemset(halfGradBlock_, 0, halfGradTotal_ * 2),
          "zero half gradients");
    for (size_t p = 0; p < spec_.params.size(); ++p)
      if (spec_.params[p].gradType != rt::DType::F32)
        hg_[p] = static_cast<char *>(halfGradBlock_) + halfGradOffset_[p] * 2;
  }
  hostBuf_.assign(bufTotal_, 0.0f);
  hostW_.assign(total_, 0.0f);
  hostM_.assign(total_, 0.0f);
  if (!sgd())
    hostV_.assign(total_, 0.0f);
  // arena_, din_[i] and the parameter blocks come from cudaMalloc (256-byte
  // aligned), which fused kernels' packed accesses rely on
  // (CudaEmitBlock.cpp, knownAlignment): keep them so.
  check(cudaMalloc(&arena_, spec_.arenaBytes + 256), "cudaMalloc(arena)");
  check(cudaMalloc(&state_, sizeof(DeviceState)), "cudaMalloc(state)");
  if (dropout_)
    check(cudaMalloc(&dropStep_, sizeof(int64_t)), "cudaMalloc(dropout step)");
  din_.assign(inputBytes_.size(), nullptr);
  for (std::vector<void *> &h : hin_)
    h.assign(inputBytes_.size(), nullptr);
  for (size_t i = 0; i < inputBytes_.size(); ++i) {
    check(cudaMalloc(&din_[i], inputBytes_[i]), "cudaMalloc(input)");
    for (int s = 0; s < 2; ++s)
      check(cudaMallocHost(&hin_[s][i], inputBytes_[i]),
            "cudaMallocHost(input)");
  }
  constants_.assign(hostConstants_.size(), nullptr);
  for (size_t i = 0; i < hostConstants_.size(); ++i) {
    const Constant &c = hostConstants_[i];
    check(cudaMalloc(&constants_[i], c.bytes), "cudaMalloc(constant)");
    check(cudaMemcpy(constants_[i], c.data, c.bytes, cudaMemcpyHostToDevice),
          "constant");
  }
  makeEpilogue();
  // The step's statistics and non-finite flags (Epilogue::report()).
  check(cudaMallocHost(&pinnedReport_, epilogue_->reportBytes()),
        "cudaMallocHost");
  // The constant and epilogue-table uploads are pageable copies on the
  // legacy stream: they may return before the DMA lands, and stream_ does
  // not wait for it.
  check(cudaDeviceSynchronize(), "setup");
}

// The epilogue reads each gradient where the step leaves it: a half one in
// hg_ unless it is widened into g_ (floatGrads_).
void DeviceModel::makeEpilogue() {
  std::vector<EpilogueTensor> ts;
  for (size_t p = 0; p < spec_.params.size(); ++p) {
    EpilogueTensor e{g_[p], w_[p], m_[p], v_[p], h_[p],
                     numel(spec_.params[p].shape)};
    if (hg_[p] && !floatGrads_) {
      e.grad = hg_[p];
      e.gradType = spec_.params[p].gradType;
    }
    ts.push_back(e);
  }
  epilogue_.reset(); // its device table first
  epilogue_ = std::make_unique<Epilogue>(
      std::move(ts), EpilogueConfig::fromCompileConfig(spec_.config));
}

void DeviceModel::requireFloatGrads() {
  if (floatGrads_)
    return;
  floatGrads_ = true;
  if (!ready_ || halfGradTotal_ == 0)
    return; // setup() will build the epilogue on the FP32 gradients
  // The captured graphs keep the half gradients and read them.
  dropForwardBackwardGraphs(); // waits for the stream
  if (stepExec_)
    check(cudaGraphExecDestroy(stepExec_), "cudaGraphExecDestroy");
  stepExec_ = nullptr;
  stepRuns_ = 0;
  makeEpilogue();
  // Called between forwardBackward() and step(), the step's gradients are
  // in hg_ still: widened, the epilogue reads them in grad().
  for (size_t p = 0; p < spec_.params.size(); ++p)
    if (hg_[p]) {
      int64_t n = numel(spec_.params[p].shape);
      bool bf16 = spec_.params[p].gradType == rt::DType::BF16;
      detail::launchWidenGrad(g_[p], hg_[p], n, bf16, false, grid(n), stream_);
    }
  check(cudaGetLastError(), "widen gradients");
  check(cudaDeviceSynchronize(), "epilogue table"); // a pageable upload
}

void DeviceModel::initialize(uint64_t seed, const rt::Hyper &hyper) {
  setup();
  // A model initialized again (a test, a second training run) captures its
  // graphs again: the seed is a kernel argument in them. Waiting for the
  // stream also orders the legacy-stream uploads below after its work.
  dropForwardBackwardGraphs();
  lastStats_ = {};
  seed_ = seed;
  for (size_t p = 0; p < spec_.params.size(); ++p) {
    const rt::ParamInfo &info = spec_.params[p];
    num::fillInit(info.init, seed, num::streamId(info.name),
                  std::span<float>(hostW_.data() + offset_[p],
                                   size_t(numel(info.shape))));
  }
  std::fill(hostM_.begin(), hostM_.end(), 0.0f);
  std::fill(hostV_.begin(), hostV_.end(), 0.0f);
  for (size_t k = 0; k < spec_.buffers.size(); ++k) {
    const rt::ParamInfo &info = spec_.buffers[k];
    num::fillInit(info.init, seed, num::streamId(info.name),
                  std::span<float>(hostBuf_.data() + bufOffset_[k],
                                   size_t(numel(info.shape))));
  }
  uploadTensors();
  check(cudaMemset(blocks_[1], 0, total_ * sizeof(float)), "cudaMemset");
  DeviceState s;
  s.scaler.scale = spec_.config.lossScale == "none" ? 1.0f // no loss scaling
                                                    : hyper.initScale;
  s.scaler.hysteresisLeft = hyper.hysteresis;
  s.hyper = hyper;
  check(cudaMemcpy(state_, &s, sizeof(s), cudaMemcpyHostToDevice), "state");
  epilogue_->clearAttribution();
  lastFlags_.clear();
  iteration_ = 0;
  dropStepNext_ = -1;
  tensorsOut_ = stateOut_ = false;
  // The memset and the pageable copies above ran on the legacy stream, which
  // does not order stream_ (non-blocking): let them land first.
  check(cudaDeviceSynchronize(), "initialize");
  castHalfCopies();
}

// Inputs: host -> pinned staging -> device on the copy stream, overlapping
// the previous step.
void DeviceModel::forwardBackward(const void *const *inputs, int micro) {
  setup();
  uploadIfPending();
  int slot = slot_;
  slot_ ^= 1;
  // The copy that last used this pinned slot (two calls ago) is done.
  check(cudaEventSynchronize(copied_[slot]), "staging");
  for (size_t i = 0; i < inputBytes_.size(); ++i)
    std::memcpy(hin_[slot][i], inputs[i], inputBytes_[i]);
  // Overwrite the device inputs once the previous forward read them.
  check(cudaStreamWaitEvent(copyStream_, consumed_, 0), "wait");
  for (size_t i = 0; i < inputBytes_.size(); ++i)
    check(cudaMemcpyAsync(din_[i], hin_[slot][i], inputBytes_[i],
                          cudaMemcpyHostToDevice, copyStream_),
          "input");
  check(cudaEventRecord(copied_[slot], copyStream_), "record");
  check(cudaStreamWaitEvent(stream_, copied_[slot], 0), "wait");
  // Two graphs: micro == 0 writes the gradients, micro > 0 adds.
  int v = micro > 0 ? 1 : 0;
  bodySlot_ = v;
  if (dropout_) {
    // Dropout reads its step (iteration * accum + micro) from dropStep_,
    // which every run advances; set it where the count breaks (first step,
    // resume).
    const int64_t step = iteration_ * spec_.config.accumSteps + micro;
    if (step != dropStepNext_) {
      check(cudaMemcpyAsync(dropStep_, &step, sizeof step,
                            cudaMemcpyHostToDevice, stream_),
            "dropout step");
      check(cudaStreamSynchronize(stream_), "dropout step");
    }
    dropStepNext_ = step + 1;
    replay(fbExec_[v], fbRuns_[v], [&] {
      runForwardBackward(micro);
      detail::launchAdvance(dropStep_, stream_);
    });
  } else {
    replay(fbExec_[v], fbRuns_[v], [&] { runForwardBackward(micro); });
  }
  check(cudaEventRecord(consumed_, stream_), "record");
  // The events are queued (in the graph just launched): the hook may order
  // collectives after them while the device still runs the backward.
  // Last parameter first, the order the backward finishes them in: the
  // bucketer's first bucket holds the last parameters, so it starts (its
  // all-reduce queued behind their events) before the rest are handed over.
  if (gradHook_)
    for (size_t p = marked_[v].size(); p-- > 0;)
      if (marked_[v][p])
        gradHook_(int(p), readyEvents_[p]);
}

bool DeviceModel::setGradReadyHook(GradReadyHook hook) {
  setup();
  check(cudaStreamSynchronize(stream_), "sync");
  if (readyEvents_.empty()) {
    readyEvents_.assign(spec_.params.size(), nullptr);
    for (cudaEvent_t &e : readyEvents_)
      check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event");
  }
  // The graphs hold the event records or not: capture them again (after a
  // warm-up run, as at the start).
  dropForwardBackwardGraphs();
  for (int v = 0; v < 2; ++v)
    marked_[v].assign(spec_.params.size(), 0);
  gradHook_ = std::move(hook);
  return true;
}

void DeviceModel::dropForwardBackwardGraphs() {
  if (stream_)
    check(cudaStreamSynchronize(stream_), "sync");
  for (int v = 0; v < 2; ++v) {
    if (fbExec_[v])
      check(cudaGraphExecDestroy(fbExec_[v]), "cudaGraphExecDestroy");
    fbExec_[v] = nullptr;
    fbRuns_[v] = 0;
  }
}

void DeviceModel::setDataShard(int rank, int) {
  if (rank != shard_)
    dropForwardBackwardGraphs();
  shard_ = rank;
}

// Recorded inside the body: eagerly, or as an external event node of the
// graph being captured (an internal one would only order the capture).
void DeviceModel::recordGradReady(int param) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream_, &capture), "cudaStreamIsCapturing");
  check(cudaEventRecordWithFlags(readyEvents_[param], stream_,
                                 capture == cudaStreamCaptureStatusActive
                                     ? cudaEventRecordExternal
                                     : cudaEventRecordDefault),
        "gradient ready event");
  marked_[bodySlot_][param] = 1;
}

float *DeviceModel::lossAccumulator() {
  return &state_->lossAccumulator; // device
}

void *DeviceModel::computeStream() {
  setup();
  return stream_;
}

void DeviceModel::copyToHost(void *dst, const void *src, size_t bytes) {
  setup();
  check(cudaStreamSynchronize(stream_), "sync");
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "copyToHost");
}

// train.fused_epilogue: two multi-tensor kernels (runtime/cuda/Epilogue.h);
// the skip decision and the scaler update stay on the device.
rt::StepStats DeviceModel::step(const rt::Hyper &h, float gradDivisor) {
  setup();
  uploadIfPending();
  setStepInputs(state_, h, gradDivisor, stream_);
  replay(stepExec_, stepRuns_, [&] {
    epilogue_->run(state_, stream_);
    // The statistics and the per-tensor non-finite flags, in one copy.
    check(cudaMemcpyAsync(pinnedReport_, epilogue_->report(),
                          epilogue_->reportBytes(), cudaMemcpyDeviceToHost,
                          stream_),
          "stats");
  });
  check(cudaEventRecord(stepDone_, stream_), "record");
  if (statsWanted_) { // log steps only: the one wait of a step
    check(cudaEventSynchronize(stepDone_), "stats");
    lastStats_ = reportStats(pinnedReport_);
    lastFlags_ = reportFlags(pinnedReport_, int(spec_.params.size()));
  }
  return lastStats_;
}

// The forward pass (dropout off), eager, between two waits.
void DeviceModel::evaluate(const void *const *inputs, void *const *outputs) {
  setup();
  uploadIfPending();
  check(cudaStreamSynchronize(stream_), "sync");
  for (size_t i = 0; i < inputBytes_.size(); ++i)
    check(cudaMemcpyAsync(din_[i], inputs[i], inputBytes_[i],
                          cudaMemcpyHostToDevice, stream_),
          "input");
  std::vector<const void *> results(outputBytes_.size(), nullptr);
  runEvaluate(results.data());
  for (size_t i = 0; i < outputBytes_.size(); ++i)
    check(cudaMemcpyAsync(outputs[i], results[i], outputBytes_[i],
                          cudaMemcpyDeviceToHost, stream_),
          "output");
  check(cudaStreamSynchronize(stream_), "evaluate");
}

// Checkpoints: host copies staged here; the next step uploads them back.
std::vector<rt::StateTensor> DeviceModel::stateTensors() {
  setup();
  downloadTensors();
  std::vector<rt::StateTensor> s;
  for (size_t p = 0; p < spec_.params.size(); ++p) {
    float *v = sgd() ? nullptr : hostV_.data() + offset_[p];
    addStateTensors(s, p, hostW_.data() + offset_[p],
                    hostM_.data() + offset_[p], v);
  }
  for (size_t k = 0; k < spec_.buffers.size(); ++k)
    addBufferTensor(s, k, hostBuf_.data() + bufOffset_[k]);
  return s;
}

std::vector<int64_t> DeviceModel::nonFiniteCounts() {
  setup();
  return epilogue_->nonFiniteCounts(stream_);
}

rt::ScalerState &DeviceModel::scaler() {
  downloadState();
  return hostState_.scaler;
}

int64_t &DeviceModel::optimizerStep() {
  downloadState();
  return hostState_.step;
}

float *DeviceModel::lossScale() const { return &state_->scaler.scale; }

void DeviceModel::addLoss(const float *loss) {
  detail::launchAddLoss(&state_->lossAccumulator, loss, stream_);
}
void DeviceModel::addLoss(const __half *loss) {
  detail::launchAddLoss(&state_->lossAccumulator, loss, stream_);
}
void DeviceModel::addLoss(const __nv_bfloat16 *loss) {
  detail::launchAddLoss(&state_->lossAccumulator, loss, stream_);
}

void DeviceModel::storeGrad(int param, const float *g, int micro) {
  int64_t n = numel(spec_.params[param].shape);
  if (micro == 0) {
    // The step may have written it in place (passes/GradInPlace.h).
    if (g != g_[param])
      check(cudaMemcpyAsync(g_[param], g, n * sizeof(float),
                            cudaMemcpyDeviceToDevice, stream_),
            "grad");
  } else
    detail::launchAccumulate(g_[param], g, n, grid(n), stream_);
}

void DeviceModel::storeGrad(int param, const __half *g, int micro) {
  storeHalfGrad(param, g, micro, false);
}
void DeviceModel::storeGrad(int param, const __nv_bfloat16 *g, int micro) {
  storeHalfGrad(param, g, micro, true);
}

void DeviceModel::storeHalfGrad(int param, const void *g, int micro,
                                bool bf16) {
  int64_t n = numel(spec_.params[param].shape);
  if (floatGrads_) {
    detail::launchWidenGrad(g_[param], g, n, bf16, micro > 0, grid(n),
                            stream_);
    check(cudaGetLastError(), "widen gradient");
    return;
  }
  if (micro > 0) // floatGrads_ holds whenever a step has micro-batches
    throw std::logic_error("a half gradient accumulated without "
                           "requireFloatGrads()");
  if (!hg_[param])
    throw std::logic_error("storeGrad: a half gradient for parameter " +
                           spec_.params[param].name +
                           ", whose ParamInfo::gradType is F32");
  if (g != hg_[param])
    check(cudaMemcpyAsync(hg_[param], g, n * 2, cudaMemcpyDeviceToDevice,
                          stream_),
          "grad");
}

Kernel DeviceModel::kernel(const char *name) {
  Kernel k = lookup(name);
  if (!k) {
    std::fprintf(stderr, "error: the CUDA kernel library has no %s\n", name);
    std::exit(1);
  }
  return k;
}

int DeviceModel::grid(int64_t n) {
  return int(std::clamp<int64_t>((n + 255) / 256, 1, 65536));
}

void DeviceModel::replay(cudaGraphExec_t &exec, int &runs,
                         const std::function<void()> &body) {
  if (runs == 0) { // counted once it ran: a throw leaves it to run again
    body();
    runs = 1;
    return;
  }
  if (!exec) {
    cudaGraph_t graph;
    check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
          "capture");
    try {
      body();
    } catch (...) {
      // A kernel's error (thrown) ends the capture, so it is reported as
      // itself rather than by the next CUDA call on a capturing stream.
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream_, &broken);
      if (broken)
        cudaGraphDestroy(broken);
      (void)cudaGetLastError(); // not the next check's to report
      throw;
    }
    check(cudaStreamEndCapture(stream_, &graph),
          "capture (a host sync inside the step?)");
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
  }
  check(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
}

void DeviceModel::uploadTensors() {
  size_t bytes = total_ * sizeof(float);
  check(cudaMemcpy(blocks_[0], hostW_.data(), bytes, cudaMemcpyHostToDevice),
        "upload");
  check(cudaMemcpy(blocks_[2], hostM_.data(), bytes, cudaMemcpyHostToDevice),
        "upload");
  if (!sgd())
    check(cudaMemcpy(blocks_[3], hostV_.data(), bytes, cudaMemcpyHostToDevice),
          "upload");
  if (bufTotal_ > 0)
    check(cudaMemcpy(bufBlock_, hostBuf_.data(), bufTotal_ * sizeof(float),
                     cudaMemcpyHostToDevice),
          "upload");
}

void DeviceModel::downloadTensors() {
  if (tensorsOut_)
    return; // already staged (and maybe edited by a resume)
  size_t bytes = total_ * sizeof(float);
  check(cudaStreamSynchronize(stream_), "sync");
  check(cudaMemcpy(hostW_.data(), blocks_[0], bytes, cudaMemcpyDeviceToHost),
        "download");
  check(cudaMemcpy(hostM_.data(), blocks_[2], bytes, cudaMemcpyDeviceToHost),
        "download");
  if (!sgd())
    check(cudaMemcpy(hostV_.data(), blocks_[3], bytes, cudaMemcpyDeviceToHost),
          "download");
  if (bufTotal_ > 0)
    check(cudaMemcpy(hostBuf_.data(), bufBlock_, bufTotal_ * sizeof(float),
                     cudaMemcpyDeviceToHost),
          "download");
  tensorsOut_ = true;
}

void DeviceModel::downloadState() {
  setup();
  if (stateOut_)
    return;
  check(cudaStreamSynchronize(stream_), "sync");
  check(cudaMemcpy(&hostState_, state_, sizeof(hostState_),
                   cudaMemcpyDeviceToHost),
        "download");
  std::memcpy(&downloadedState_, &hostState_, sizeof(hostState_));
  stateOut_ = true;
}

// Host copies handed out (checkpoint save or load) go back before the next
// step.
void DeviceModel::uploadIfPending() {
  // Nothing runs on the device between the download and here, so an
  // unchanged host copy is the device's state still.
  if (stateOut_ && std::memcmp(&hostState_, &downloadedState_,
                               sizeof(hostState_)) == 0)
    stateOut_ = false;
  if (!tensorsOut_ && !stateOut_)
    return;
  if (tensorsOut_)
    uploadTensors();
  if (stateOut_)
    check(cudaMemcpy(state_, &hostState_, sizeof(hostState_),
                     cudaMemcpyHostToDevice),
          "upload");
  bool uploaded = tensorsOut_;
  tensorsOut_ = stateOut_ = false;
  // Pageable cudaMemcpy on the legacy stream may return before the DMA
  // lands; stream_ (non-blocking) would not wait for it.
  check(cudaDeviceSynchronize(), "upload");
  if (uploaded)
    castHalfCopies(); // a resume may have changed the masters
}

// After the masters were written from the host: the half copies again, on
// stream_ (so before the step that reads them), eager.
void DeviceModel::castHalfCopies() {
  bool bf16 = spec_.config.amp == "bf16";
  for (size_t p = 0; p < spec_.params.size(); ++p)
    if (h_[p]) {
      int64_t n = numel(spec_.params[p].shape);
      detail::launchCastToHalf(w_[p], h_[p], n, bf16, grid(n), stream_);
    }
  check(cudaGetLastError(), "half weight copies");
}

} // namespace ampc::cuda

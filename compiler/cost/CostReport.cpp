//===- CostReport.cpp - The step's launches, roofline, text and JSON -------===//
#include "compiler/cost/CostReport.h"
#include "compiler/cost/DataParallelCost.h"

#include "compiler/ModelLoader.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/KernelOps.h"
#include "dialects/Train/TrainOps.h"
#include "passes/GradInPlace.h"
#include "passes/GradReady.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace ampc;
using namespace ampc::cost;

llvm::StringRef ampc::cost::boundName(Bound bound) {
  switch (bound) {
  case Bound::Memory: return "memory";
  case Bound::Compute: return "compute";
  case Bound::Link: return "link";
  }
  return "memory";
}

namespace {

// Epilogue.cu: blocks of kEpilogueChunk elements.
constexpr int64_t kEpilogueChunk = 65536;

std::string nameOf(Value v, AsmState &state) {
  std::string s;
  llvm::raw_string_ostream os(s);
  v.printAsOperand(os, state);
  return s;
}


// DeviceModel::step(): setInputs, the epilogue's two passes over every
// parameter (runtime/cuda/Epilogue.cu; |gradBytes| of gradients, FP32 or
// half; |halfCopies| elements also written as the half copy the next step
// reads), the statistics copied to pinned memory (a GPU only: HostModel's
// are in host memory already). Packed (16-byte) or element accesses move
// the same bytes: each pass reads and writes every element once.
void appendEpilogue(train::FusedEpilogueOp epilogue, int64_t params,
                    double gradBytes, int64_t numTensors, int64_t halfCopies,
                    bool device, std::vector<Launch> &out) {
  train::ConfigAttr config = epilogue.getConfig();
  StringRef opt = config.getOptimizer();
  int64_t chunks = 0;
  for (Value p : epilogue.getParams())
    chunks += (cast<RankedTensorType>(p.getType()).getNumElements() +
               kEpilogueChunk - 1) /
              kEpilogueChunk;
  double n = double(params);
  std::string op = "train.fused_epilogue";
  // One thread stores the hyper-parameters (a few hundred bytes: 0 here).
  out.push_back(hostLaunch("setInputs", op, "hyper-parameters", Kind::Runtime,
                           0, 0, 0, 1));
  // pass1: each gradient read once (unscale, non-finite check, squares);
  // per-chunk partial sums, per-tensor norms.
  out.push_back(hostLaunch("pass1", op, "unscale+check+norm", Kind::Epilogue,
                           gradBytes, 4 * double(chunks + numTensors), 3 * n,
                           1));
  // pass2: gradient read, master read and written, moments read and
  // written. SGD touches its momentum buffer only when momentum != 0 (the
  // compiled-in default is what counts here).
  double read = gradBytes + 4 * n, written = 4 * n, flops = 4 * n;
  std::string what = opt.str();
  if (opt == "sgd") {
    double momentum = 0;
    if (auto m = config.getDefaults().getAs<FloatAttr>("momentum"))
      momentum = m.getValueAsDouble();
    if (momentum != 0) {
      read += 4 * n;
      written += 4 * n;
      flops += 3 * n;
      what += " (momentum)";
    }
  } else { // adam, adamw: exp_avg and exp_avg_sq
    read += 8 * n;
    written += 8 * n;
    flops = 16 * n;
  }
  if (halfCopies > 0) {
    written += 2 * double(halfCopies);
    what += " + half weights";
  }
  out.push_back(
      hostLaunch("pass2", op, what + " update", Kind::Epilogue, read, written,
                 flops, 1));
  // 24 bytes of rt::StepStats to pinned host memory.
  if (device)
    out.push_back(hostLaunch("cudaMemcpyAsync", op, "step statistics",
                             Kind::Copy, 24, 0, 0, 1));
}

void roofline(Row &row, const DeviceSpec &d) {
  const Launch &l = row.launch;
  double mem = (l.bytesRead + l.bytesWritten) / d.bytesPerSecond;
  double comp =
      l.flops / (l.halfMath ? d.halfFlopsPerSecond : d.fp32FlopsPerSecond);
  double link = 0;
  if (l.kind == Kind::Collective) {
    assert(!d.linkProtocols.empty() && "a device without link protocols");
    link = std::numeric_limits<double>::infinity();
    for (const LinkProtocol &p : d.linkProtocols) {
      double latency = p.baseSeconds + double(l.linkSteps) * p.stepSeconds;
      double t = latency + l.linkBytes / p.bytesPerSecond;
      if (t < link) {
        link = t;
        row.protocol = p.name;
        row.linkLatencySeconds = latency;
      }
    }
  }
  row.seconds = std::max({mem, comp, link});
  row.bound = link > std::max(mem, comp) ? Bound::Link
              : mem >= comp              ? Bound::Memory
                                         : Bound::Compute;
}


std::vector<size_t> topRows(const CostReport &r, unsigned top) {
  std::vector<size_t> idx(r.rows.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return r.rows[a].seconds * r.rows[a].launch.count >
           r.rows[b].seconds * r.rows[b].launch.count;
  });
  if (idx.size() > top)
    idx.resize(top);
  return idx;
}

// Rows of the same kernel for the same op, summed: where the time goes
// when one kind of kernel runs once per layer.
struct Group {
  std::string op, name;
  Kind kind;
  int64_t launches = 0;
  double bytes = 0, flops = 0, seconds = 0;
};

// |byOp|: one group per op, its backward op included (the name is then
// empty).
std::vector<Group> groups(const CostReport &r, unsigned top, bool byOp) {
  std::vector<Group> gs;
  llvm::StringMap<size_t> index;
  for (const Row &row : r.rows) {
    const Launch &l = row.launch;
    std::string op = l.op;
    // The fused GELU GEMM's backward is not named after its forward.
    if (byOp && op == "graph.matmul_gelu_backward")
      op = "graph.linear_gelu";
    else if (byOp && StringRef(op).ends_with("_backward"))
      op.resize(op.size() - strlen("_backward"));
    auto [it, added] =
        index.try_emplace(byOp ? op : op + " " + l.name, gs.size());
    if (added)
      gs.push_back({op, byOp ? "" : l.name, l.kind});
    Group &g = gs[it->second];
    double c = double(l.count);
    g.launches += l.count;
    g.bytes += c * (l.bytesRead + l.bytesWritten);
    g.flops += c * l.flops;
    g.seconds += c * row.seconds;
  }
  std::stable_sort(gs.begin(), gs.end(), [](const Group &a, const Group &b) {
    return a.seconds > b.seconds;
  });
  if (gs.size() > top)
    gs.resize(top);
  return gs;
}


} // namespace

// True when a matrix (rank >= 2) operand or result of |op| has rows that
// are not a multiple of 16 bytes: the leading dimension of a row-major
// GEMM operand is its last dimension. Counted for the cublasLtMatmul
// launches of the matmul and linear ops (not cuDNN's, which pick their own
// layouts).
static bool rowsMisaligned(Operation *op) {
  auto bad = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getRank() < 2 || !t.getElementType().isIntOrFloat())
      return false;
    int64_t bits = t.getElementType().getIntOrFloatBitWidth();
    return (t.getShape().back() * bits) % 128 != 0;
  };
  return llvm::any_of(op->getOperands(), bad) ||
         llvm::any_of(op->getResults(), bad);
}

FailureOr<CostReport>
ampc::cost::buildCostReport(ModuleOp module, Target target,
                            const DeviceSpec &device,
                            ArrayRef<std::string> fusedKernelNames,
                            const DataParallelSpec &dp) {
  graph::ModelOp model = getModel(module);
  if (!model)
    return module.emitError("the cost report needs a graph.model"), failure();
  std::string name = model.getSymName().str();
  auto grad = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      module, StringAttr::get(module.getContext(), name + "_grad"));
  auto step = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      module, StringAttr::get(module.getContext(), name + "_step"));
  train::FusedEpilogueOp epilogue;
  if (step)
    step.walk([&](train::FusedEpilogueOp e) { epilogue = e; });
  if (!grad || !epilogue)
    return module.emitError("the cost report needs @")
               << name << "_grad and @" << name
               << "_step with a train.fused_epilogue (run the training "
                  "pipeline first)",
           failure();

  CostReport r;
  r.model = name;
  r.target = target;
  r.device = &device;
  train::ConfigAttr config = epilogue.getConfig();
  r.amp = config.getAmp().str();
  r.optimizer = config.getOptimizer().str();
  r.accumSteps = std::max<int64_t>(1, config.getAccumSteps());
  if (auto a = grad->getAttrOfType<IntegerAttr>(kernel::kArenaSizeAttr))
    r.arenaBytes = a.getInt();
  if (auto a = grad->getAttrOfType<IntegerAttr>(kernel::kArenaNoReuseAttr))
    r.arenaBytesNoReuse = a.getInt();
  // The host twin (cpu::HostModel) copies with memcpy.
  std::string copyName = target == Target::Cuda ? "cudaMemcpyAsync" : "memcpy";

  // Model::params() order, and the gradient buffers' sizes.
  SmallVector<int64_t> paramSizes;
  SmallVector<std::string> paramNames;
  llvm::StringMap<size_t> paramIndex;
  for (auto p : model.getBlock().getOps<graph::ParamOp>()) {
    paramIndex.try_emplace(p.getName(), paramSizes.size());
    paramSizes.push_back(cast<RankedTensorType>(p.getType()).getNumElements());
    paramNames.push_back(p.getName().str());
  }
  const int64_t accum = r.accumSteps;
  const int64_t world = std::max<int64_t>(1, dp.worldSize);
  Block &body = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());

  // DeviceModel's hand-over of each gradient (storeGrad), printed right
  // after the op that finishes it (passes/GradReady.h): a copy on
  // micro-batch 0 unless written in place, accumulate after; a half
  // gradient (train-half-grads) widened into FP32 when micro-batches
  // accumulate, ranks sum FP32 (Model::requireFloatGrads) or on the CPU
  // (HostModel's epilogue reads FP32); otherwise the epilogue reads it where
  // the step left it.
  struct Stores {
    std::vector<Launch> launches;
    std::vector<bool> firstOnly; // micro-batch 0 only
    // A parameter, and how many of |launches| hand its gradient over (its
    // gradReady follows them).
    std::vector<std::pair<size_t, size_t>> params;
  };
  llvm::MapVector<Operation *, Stores> stores; // null: after the body
  const bool widen = accum > 1 || target != Target::Cuda || world > 1;
  int64_t numTensors = 0;
  double gradBytes = 0; // what the epilogue reads
  DenseSet<Value> inPlace = gradsWrittenInPlace(grad);
  DenseMap<Value, Operation *> touch;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto param = grad.getResultAttrOfType<StringAttr>(i, graph::kGradAttr);
    if (!param)
      continue;
    auto type = cast<RankedTensorType>(v.getType());
    double n = double(type.getNumElements());
    ++numTensors;
    r.parameters += int64_t(n);
    const std::string name = param.getValue().str();
    auto [t, fresh] = touch.try_emplace(v, nullptr);
    if (fresh)
      t->second = lastTouch(v, body);
    Stores &s = stores[t->second];
    auto add = [&](Launch l, bool firstOnly) {
      s.launches.push_back(std::move(l));
      s.firstOnly.push_back(firstOnly);
    };
    if (type.getElementType().isF32()) {
      if (!inPlace.contains(v))
        add(hostLaunch(copyName, "storeGrad", name, Kind::Copy, 4 * n, 4 * n,
                       0, 1),
            true);
      if (accum > 1)
        add(hostLaunch("accumulate", "storeGrad", name, Kind::Runtime, 8 * n,
                       4 * n, n, accum - 1),
            false);
      gradBytes += 4 * n;
    } else if (widen) {
      add(hostLaunch("widenGrad", "storeGrad", name, Kind::Runtime, 2 * n,
                     4 * n, 0, 1),
          true);
      if (accum > 1)
        add(hostLaunch("widenGrad (add)", "storeGrad", name, Kind::Runtime,
                       6 * n, 4 * n, n, accum - 1),
            false);
      gradBytes += 4 * n;
    } else {
      if (!inPlace.contains(v))
        add(hostLaunch(copyName, "storeGrad", name, Kind::Copy, 2 * n, 2 * n,
                       0, 1),
            true);
      gradBytes += 2 * n;
    }
    if (auto idx = paramIndex.find(param.getValue()); idx != paramIndex.end())
      s.params.push_back({idx->second, s.launches.size()});
  }

  std::vector<Launch> launches;
  std::vector<bool> firstOnly;               // parallel to |launches|
  std::vector<std::pair<size_t, size_t>> readyAt; // (param, next row)
  auto appendStores = [&](Operation *op) {
    auto it = stores.find(op);
    if (it == stores.end())
      return;
    size_t base = launches.size();
    llvm::append_range(launches, it->second.launches);
    llvm::append_range(firstOnly, it->second.firstOnly);
    for (auto [p, handedOver] : it->second.params)
      readyAt.push_back({p, base + handedOver});
  };
  RuleState state;
  state.target = target;
  state.fusedNames = fusedKernelNames;
  AsmState asmState(grad);
  bool dropout = false;
  for (Operation &op : body.without_terminator()) {
    size_t first = launches.size();
    appendLaunches(&op, state, launches);
    dropout |= isa<graph::DropoutOp>(op);
    bool misaligned = rowsMisaligned(&op);
    for (size_t i = first; i < launches.size(); ++i) {
      launches[i].count = accum;
      launches[i].misaligned =
          misaligned && launches[i].name == "cublasLtMatmul";
      if (op.getNumResults())
        launches[i].where = nameOf(op.getResult(0), asmState);
    }
    firstOnly.resize(launches.size(), false);
    appendStores(&op);
  }
  // After the body: addLoss, the gradients no op produces, the dropout
  // step counter.
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (auto out = grad.getResultAttrOfType<StringAttr>(i, graph::kOutputAttr);
        out && out.getValue() == "loss") {
      launches.push_back(hostLaunch("addLoss", "addLoss", "loss",
                                    Kind::Runtime, tensorBytes(v) + 4, 4, 1,
                                    accum));
      firstOnly.push_back(false);
    }
  }
  appendStores(nullptr);
  if (dropout) {
    launches.push_back(hostLaunch("advance", "dropout step", "", Kind::Runtime,
                                  8, 8, 0, accum));
    firstOnly.push_back(false);
  }
  const size_t bodyEnd = launches.size();

  // The all-reduce of this rank (world > 1).
  std::vector<std::vector<size_t>> bucketParams;
  r.dataParallel.worldSize = world;
  if (world > 1)
    appendAllReduce(dp, target, paramSizes, paramNames, launches,
                    r.dataParallel, bucketParams);

  // Half weight copies the epilogue writes (train-half-weight-copies): the
  // masters' elements, not the zero rows a padded copy has after them
  // (graph-pad-classes).
  llvm::StringMap<int64_t> masterSize;
  for (BlockArgument arg : grad.getArguments())
    if (auto name = grad.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      graph::kParamAttr))
      masterSize[name.getValue()] =
          cast<RankedTensorType>(arg.getType()).getNumElements();
  int64_t halfCopies = 0;
  for (BlockArgument arg : grad.getArguments())
    if (auto name = grad.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      graph::kParamCopyAttr))
      halfCopies += masterSize.lookup(name.getValue());
  appendEpilogue(epilogue, r.parameters, gradBytes, numTensors, halfCopies,
                 target == Target::Cuda, launches);

  for (Launch &l : launches) {
    Row row;
    row.launch = std::move(l);
    roofline(row, device);
    Totals &t = r.totals;
    double c = double(row.launch.count);
    t.launches += row.launch.count;
    (row.launch.kind == Kind::Copy ? t.copies : t.kernels) += row.launch.count;
    if (row.launch.misaligned)
      t.misalignedGemms += row.launch.count;
    t.bytesRead += c * row.launch.bytesRead;
    t.bytesWritten += c * row.launch.bytesWritten;
    t.flops += c * row.launch.flops;
    t.linkBytes += c * row.launch.linkBytes;
    t.seconds += c * row.seconds;
    (row.bound == Bound::Memory    ? t.memorySeconds
     : row.bound == Bound::Compute ? t.computeSeconds
                                   : t.linkSeconds) += c * row.seconds;
    r.rows.push_back(std::move(row));
  }
  overlapAllReduce(r, dp, firstOnly, bodyEnd, readyAt, bucketParams);
  return r;
}

static std::string integer(double v) { return llvm::formatv("{0:F0}", v); }

static void printRow(size_t i, const Row &row, llvm::raw_ostream &os) {
  const Launch &l = row.launch;
  os << llvm::formatv("{0,5} {1,-10} {2,-36} {3,-28} {4,-20} {5,5} {6,13} "
                      "{7,13} {8,16} {9,12:F1} {10}\n",
                      i, kindName(l.kind), l.name, l.op, l.where, l.count,
                      integer(l.bytesRead), integer(l.bytesWritten),
                      integer(l.flops), row.seconds * 1e9,
                      row.protocol.empty()
                          ? boundName(row.bound).str()
                          : (boundName(row.bound) + ", " + row.protocol).str());
}

// "LL 6.6 us + 0.6 us a ring step at 141.0 GB/s, ...".
static std::string protocolsText(const DeviceSpec &d) {
  std::string s;
  for (const LinkProtocol &p : d.linkProtocols) {
    s += llvm::formatv("{0}{1} {2:F1} us", s.empty() ? "" : ", ", p.name,
                       p.baseSeconds * 1e6);
    if (p.stepSeconds > 0)
      s += llvm::formatv(" + {0:F1} us a ring step", p.stepSeconds * 1e6);
    s += llvm::formatv(" at {0:F1} GB/s", p.bytesPerSecond / 1e9);
  }
  return s;
}

void ampc::cost::printCostText(const CostReport &r, llvm::raw_ostream &os,
                               unsigned top) {
  const DeviceSpec &d = *r.device;
  os << "cost of one training step of @" << r.model << ": target "
     << (r.target == Target::Cuda ? "cuda" : "cpu") << ", amp " << r.amp
     << ", optimizer " << r.optimizer << ", " << r.accumSteps
     << " micro-batch(es), " << r.parameters << " parameters";
  if (r.dataParallel.worldSize > 1)
    os << ", one of " << r.dataParallel.worldSize << " data-parallel ranks";
  os << "\n";
  os << llvm::formatv("device {0} ({1}): {2:F1} GB/s, FP32 {3:F1} TFLOP/s, "
                      "FP16/BF16 tensor {4:F1} TFLOP/s",
                      d.name, d.description, d.bytesPerSecond / 1e9,
                      d.fp32FlopsPerSecond / 1e12, d.halfFlopsPerSecond / 1e12);
  if (r.dataParallel.worldSize > 1)
    os << llvm::formatv(", link {0:F1} GB/s each way ({1})",
                        d.linkBytesPerSecond / 1e9, protocolsText(d));
  os << "\n  source: " << d.source << "\n";
  os << "memory plan of @" << r.model << "_grad: arena " << r.arenaBytes
     << " bytes (" << r.arenaBytesNoReuse << " without reuse)\n";
  os << "roofline per launch: max(bytes / bandwidth, FLOPs / peak";
  if (r.dataParallel.worldSize > 1)
    os << ", a collective's latency + link bytes / its bandwidth, under "
          "its fastest protocol";
  os << "); bytes are device-memory traffic, each tensor once\n\n";
  os << llvm::formatv("{0,5} {1,-10} {2,-36} {3,-28} {4,-20} {5,5} {6,13} "
                      "{7,13} {8,16} {9,12} {10}\n",
                      "#", "kind", "kernel", "op", "value", "calls",
                      "bytes read", "bytes written", "FLOPs", "time ns",
                      "bound");
  for (auto [i, row] : llvm::enumerate(r.rows))
    printRow(i, row, os);
  const Totals &t = r.totals;
  os << "\ntotals per step: " << t.launches << " launches (" << t.kernels
     << " kernels, " << t.copies << " copies)\n";
  os << "  bytes: " << integer(t.bytesRead + t.bytesWritten) << " ("
     << integer(t.bytesRead) << " read, " << integer(t.bytesWritten)
     << " written)\n";
  os << "  FLOPs: " << integer(t.flops) << "\n";
  if (t.misalignedGemms && r.target == Target::Cuda)
    os << "  GEMMs with rows not a multiple of 16 bytes: " << t.misalignedGemms
       << " (cuBLASLt runs them without its TMA kernels; the floor assumes "
          "aligned ones)\n";
  os << llvm::formatv("  floor time: {0:F3} us ({1:F3} ms)\n", t.seconds * 1e6,
                      t.seconds * 1e3);
  double share = t.seconds > 0 ? t.memorySeconds / t.seconds : 0;
  if (t.linkSeconds > 0) {
    auto pct = [&](double x) {
      return t.seconds > 0 ? 100 * x / t.seconds : 0.0;
    };
    os << llvm::formatv("  memory-bound: {0:F1}% of the time, compute-bound: "
                        "{1:F1}%, interconnect-bound: {2:F1}%\n",
                        pct(t.memorySeconds), pct(t.computeSeconds),
                        pct(t.linkSeconds));
  } else {
    os << llvm::formatv("  memory-bound: {0:F1}% of the time, compute-bound: "
                        "{1:F1}%\n",
                        100 * share, t.seconds > 0 ? 100 * (1 - share) : 0.0);
  }
  const DataParallelCost &dp = r.dataParallel;
  if (dp.worldSize > 1) {
    os << llvm::formatv("  data parallel: {0} ranks, ring all-reduce of {1} "
                        "bucket(s) ({2} staged) and the loss: {3} bytes sent "
                        "a rank, {4:F3} us\n",
                        dp.worldSize, dp.buckets(), dp.stagedBuckets(),
                        integer(t.linkBytes), dp.collectiveSeconds * 1e6);
    if (dp.overlap)
      os << llvm::formatv("  with the overlap (buckets start as the backward "
                          "finishes their gradients): floor {0:F3} us, {1:F3} "
                          "us of the all-reduce hidden behind the backward\n",
                          dp.overlappedSeconds * 1e6,
                          (t.seconds - dp.overlappedSeconds) * 1e6);
    else
      os << "  no overlap: " << (r.target == Target::Cpu
                                     ? "MPI progresses the buckets inside "
                                       "finish(), after the backward"
                                     : "--overlap-allreduce=false")
         << "; the floor is the rows' sum\n";
    os << llvm::formatv("  {0,6} {1,6} {2,12} {3,6} {4,15} {5,12} {6,12} "
                        "{7,12}\n",
                        "bucket", "pieces", "bytes", "staged",
                        "ready after row", "ready us", "start us", "end us");
    for (auto [b, c] : llvm::enumerate(dp.bucketCosts))
      os << llvm::formatv("  {0,6} {1,6} {2,12} {3,6} {4,15} {5,12:F3} "
                          "{6,12:F3} {7,12:F3}\n",
                          b, c.pieces, integer(c.bytes),
                          c.staged ? "yes" : "no", c.readyAfterRow,
                          c.readySeconds * 1e6, c.startSeconds * 1e6,
                          c.endSeconds * 1e6);
  }
  os << "\ntop " << top << " kernels by estimated time (time x calls):\n";
  for (size_t i : topRows(r, top)) {
    const Row &row = r.rows[i];
    double s = row.seconds * row.launch.count;
    os << llvm::formatv("  #{0,-5} {1,-36} {2,-28} {3,-20} {4,10:F1} us "
                        "{5,5:F1}%  {6}\n",
                        i, row.launch.name, row.launch.op, row.launch.where,
                        s * 1e6, t.seconds > 0 ? 100 * s / t.seconds : 0.0,
                        boundName(row.bound));
  }
  os << "\ntop " << top << " kernels summed over the step (same kernel, same "
        "op):\n";
  os << llvm::formatv("  {0,-36} {1,-44} {2,8} {3,16} {4,12} {5,6}\n", "kernel",
                      "op", "launches", "bytes", "time us", "share");
  for (const Group &g : groups(r, top, false))
    os << llvm::formatv("  {0,-36} {1,-44} {2,8} {3,16} {4,12:F1} {5,5:F1}%\n",
                        g.name, g.op, g.launches, integer(g.bytes),
                        g.seconds * 1e6,
                        t.seconds > 0 ? 100 * g.seconds / t.seconds : 0.0);
  os << "\ntime by op (its backward included), all ops:\n";
  os << llvm::formatv("  {0,-44} {1,8} {2,16} {3,20} {4,12} {5,6}\n", "op",
                      "launches", "bytes", "FLOPs", "time us", "share");
  for (const Group &g : groups(r, ~0u, true))
    os << llvm::formatv("  {0,-44} {1,8} {2,16} {3,20} {4,12:F1} {5,5:F1}%\n",
                        g.op, g.launches, integer(g.bytes), integer(g.flops),
                        g.seconds * 1e6,
                        t.seconds > 0 ? 100 * g.seconds / t.seconds : 0.0);
}

static llvm::json::Object deviceJson(const DeviceSpec &d) {
  llvm::json::Array protocols;
  for (const LinkProtocol &p : d.linkProtocols)
    protocols.push_back(llvm::json::Object{{"name", p.name},
                                           {"base_latency_s", p.baseSeconds},
                                           {"step_latency_s", p.stepSeconds},
                                           {"bytes_per_second", p.bytesPerSecond}});
  return llvm::json::Object{
      {"name", d.name},
      {"target", d.target},
      {"description", d.description},
      {"bytes_per_second", d.bytesPerSecond},
      {"fp32_flops_per_second", d.fp32FlopsPerSecond},
      {"half_flops_per_second", d.halfFlopsPerSecond},
      {"link_bytes_per_second", d.linkBytesPerSecond},
      {"link_protocols", std::move(protocols)},
      {"source", d.source}};
}

void ampc::cost::printCostJson(const CostReport &r, llvm::raw_ostream &os,
                               unsigned top) {
  llvm::json::Array rows;
  for (auto [i, row] : llvm::enumerate(r.rows)) {
    const Launch &l = row.launch;
    rows.push_back(llvm::json::Object{
        {"index", int64_t(i)},
        {"kind", kindName(l.kind)},
        {"name", l.name},
        {"op", l.op},
        {"value", l.where},
        {"count", l.count},
        {"bytes_read", l.bytesRead},
        {"bytes_written", l.bytesWritten},
        {"flops", l.flops},
        {"half_math", l.halfMath},
        {"time_s", row.seconds},
        {"link_bytes", l.linkBytes},
        {"link_steps", l.linkSteps},
        {"link_protocol", row.protocol},
        {"link_latency_s", row.linkLatencySeconds},
        {"bound", boundName(row.bound)}});
  }
  llvm::json::Array topIdx;
  for (size_t i : topRows(r, top))
    topIdx.push_back(int64_t(i));
  llvm::json::Array byKernel;
  for (const Group &g : groups(r, top, false))
    byKernel.push_back(llvm::json::Object{{"name", g.name},
                                          {"op", g.op},
                                          {"kind", kindName(g.kind)},
                                          {"launches", g.launches},
                                          {"bytes", g.bytes},
                                          {"flops", g.flops},
                                          {"time_s", g.seconds}});
  llvm::json::Array byOp;
  for (const Group &g : groups(r, ~0u, true))
    byOp.push_back(llvm::json::Object{{"op", g.op},
                                      {"launches", g.launches},
                                      {"bytes", g.bytes},
                                      {"flops", g.flops},
                                      {"time_s", g.seconds}});
  llvm::json::Array devices;
  for (const DeviceSpec &d : deviceTable())
    devices.push_back(deviceJson(d));
  const Totals &t = r.totals;
  llvm::json::Object totals{
      {"launches", t.launches},
      {"kernels", t.kernels},
      {"copies", t.copies},
      {"misaligned_gemms", t.misalignedGemms},
      {"bytes_read", t.bytesRead},
      {"bytes_written", t.bytesWritten},
      {"bytes", t.bytesRead + t.bytesWritten},
      {"flops", t.flops},
      {"time_s", t.seconds},
      {"memory_bound_time_s", t.memorySeconds},
      {"compute_bound_time_s", t.computeSeconds},
      {"memory_bound_share", t.seconds > 0 ? t.memorySeconds / t.seconds : 0.0},
      {"link_bytes", t.linkBytes},
      {"link_bound_time_s", t.linkSeconds}};
  const DataParallelCost &dp = r.dataParallel;
  llvm::json::Array buckets;
  for (const BucketCost &c : dp.bucketCosts)
    buckets.push_back(llvm::json::Object{{"first_row", c.firstRow},
                                         {"end_row", c.endRow},
                                         {"unpack_row", c.unpackRow},
                                         {"unpack_end_row", c.unpackEndRow},
                                         {"pieces", c.pieces},
                                         {"elements", c.elements},
                                         {"bytes", c.bytes},
                                         {"staged", c.staged},
                                         {"ready_after_row", c.readyAfterRow},
                                         {"ready_s", c.readySeconds},
                                         {"start_s", c.startSeconds},
                                         {"end_s", c.endSeconds}});
  llvm::json::Object dataParallel{
      {"world_size", dp.worldSize},
      {"buckets", dp.buckets()},
      {"staged_buckets", dp.stagedBuckets()},
      {"link_bytes", t.linkBytes},
      {"collective_time_s", dp.collectiveSeconds},
      {"overlap", dp.overlap},
      {"backward_time_s", dp.backwardSeconds},
      {"overlapped_time_s", dp.overlappedSeconds},
      {"bucket_list", std::move(buckets)}};
  llvm::json::Object root{
      {"model", r.model},
      {"target", r.target == Target::Cuda ? "cuda" : "cpu"},
      {"amp", r.amp},
      {"optimizer", r.optimizer},
      {"accum_steps", r.accumSteps},
      {"parameters", r.parameters},
      {"arena_bytes", r.arenaBytes},
      {"arena_bytes_no_reuse", r.arenaBytesNoReuse},
      {"device", deviceJson(*r.device)},
      {"kernels", std::move(rows)},
      {"totals", std::move(totals)},
      {"data_parallel", std::move(dataParallel)},
      {"top", std::move(topIdx)},
      {"top_by_kernel", std::move(byKernel)},
      {"by_op", std::move(byOp)},
      {"devices", std::move(devices)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

void ampc::cost::printDeviceTable(llvm::raw_ostream &os) {
  os << llvm::formatv("{0,-10} {1,-6} {2,10} {3,12} {4,12} {5,10}  {6}\n",
                      "device", "target", "GB/s", "FP32 TFLOP/s",
                      "half TFLOP/s", "link GB/s", "source");
  for (const DeviceSpec &d : deviceTable())
    os << llvm::formatv(
        "{0,-10} {1,-6} {2,10:F1} {3,12:F3} {4,12:F3} {5,10:F2}  {6}\n",
        d.name, d.target, d.bytesPerSecond / 1e9, d.fp32FlopsPerSecond / 1e12,
        d.halfFlopsPerSecond / 1e12, d.linkBytesPerSecond / 1e9, d.source);
  os << "\ncollective latency (a ring all-reduce of W ranks takes 2 (W-1) "
        "steps; each collective goes by its fastest protocol):\n";
  for (const DeviceSpec &d : deviceTable())
    os << llvm::formatv("{0,-10} {1}\n", d.name, protocolsText(d));
}

//===- KernelPlanMemory.cpp - One arena, buffers reused by liveness -------===//
#include "dialects/Graph/GraphGradOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/GradInPlace.h"
#include "passes/Passes.h"
#include "passes/ValueAliases.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>
#include <optional>
#include <queue>
#include <set>
#include <tuple>

namespace ampc {
#define GEN_PASS_DEF_KERNELPLANMEMORY
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

constexpr int64_t kAlign = 64;

int64_t bytesOf(Type type) {
  auto t = cast<RankedTensorType>(type);
  int64_t width = (t.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  int64_t bytes = t.getNumElements() * width;
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// Element j of |a| and of |b| are the same bytes: as many elements, as wide
// (bytesOf rounds up, so equal sizes do not say it).
bool sameLayout(Type a, Type b) {
  auto x = cast<RankedTensorType>(a), y = cast<RankedTensorType>(b);
  return x.getNumElements() == y.getNumElements() &&
         x.getElementType().getIntOrFloatBitWidth() ==
             y.getElementType().getIntOrFloatBitWidth();
}

// Ops whose results live elsewhere: data and parameters come from the
// runtime, train ops update persistent state in place.
bool needsNoStorage(Operation *op) {
  return isa<graph::InputOp, graph::ParamOp, graph::BufferOp>(op) ||
         op->hasTrait<OpTrait::IsTerminator>() ||
         op->getDialect()->getNamespace() == "train";
}

// The operand whose buffer result |k| of |op| may take, when that operand's
// last use is |op|: kernels that read each element before they write it.
// cross_entropy_with_grad writes dlogits over the logits (Loss.cpp, .cu).
std::optional<unsigned> inPlaceOperand(Operation *op, unsigned k) {
  if (isa<graph::CrossEntropyWithGradOp>(op) && k == 1)
    return 0;
  return std::nullopt;
}

struct Buffer {
  int64_t offset, size;
  size_t end; // position of the last use
  size_t id;
};

// The live buffers by offset, with the gaps between them indexed by length,
// so that first fit (the lowest gap that holds a size) and expiry cost a
// logarithm rather than a walk over every live buffer. Buffers do not
// overlap: each is placed at the start of a gap that holds it, or at the
// top. The space above the top buffer is no gap.
class Arena {
public:
  // The offset first fit gives |size|: the lowest gap of at least |size|
  // bytes (between 0 and the first buffer, or between two), else the top.
  int64_t fit(int64_t size) const {
    if (size <= 0) // any gap holds it, even the empty one below the first
      return 0;
    std::optional<int64_t> best;
    for (auto it = gaps.lower_bound(size); it != gaps.end(); ++it)
      if (!best || *it->second.begin() < *best)
        best = *it->second.begin();
    if (best)
      return *best;
    if (live.empty())
      return 0;
    const Buffer &top = live.rbegin()->second;
    return top.offset + top.size;
  }

  // A buffer at |offset| replaces the one there, if any.
  void insert(const Buffer &buf) {
    if (auto it = live.find(buf.offset); it != live.end())
      erase(it);
    auto [it, inserted] = live.emplace(buf.offset, buf);
    (void)inserted;
    int64_t before = prevEnd(it);
    auto next = std::next(it);
    if (next != live.end()) {
      removeGap(before, next->first - before);
      addGap(buf.offset + buf.size, next->first - (buf.offset + buf.size));
    }
    addGap(before, buf.offset - before);
  }

  bool isLive(int64_t offset, size_t id) const {
    auto it = live.find(offset);
    return it != live.end() && it->second.id == id;
  }

  void erase(int64_t offset) { erase(live.find(offset)); }

private:
  using Map = std::map<int64_t, Buffer>;

  int64_t prevEnd(Map::iterator it) const {
    if (it == live.begin())
      return 0;
    auto prev = std::prev(it);
    return prev->second.offset + prev->second.size;
  }

  void erase(Map::iterator it) {
    int64_t before = prevEnd(it);
    const Buffer &buf = it->second;
    removeGap(before, buf.offset - before);
    auto next = std::next(it);
    if (next != live.end()) {
      removeGap(buf.offset + buf.size, next->first - (buf.offset + buf.size));
      addGap(before, next->first - before);
    }
    live.erase(it);
  }

  void addGap(int64_t at, int64_t length) {
    if (length > 0)
      gaps[length].insert(at);
  }
  void removeGap(int64_t at, int64_t length) {
    if (length <= 0)
      return;
    auto it = gaps.find(length);
    it->second.erase(at);
    if (it->second.empty())
      gaps.erase(it);
  }

  Map live;                                  // by offset
  std::map<int64_t, std::set<int64_t>> gaps; // offsets by length
};

// |evaluation|: the model's own block, which the emitters print as the
// evaluation forward (passes/ValueAliases.h).
void planBlock(Block &block, Operation *holder, bool evaluation) {
  auto aliases = [&](Operation &op) { return aliasesOperand(&op, evaluation); };
  MLIRContext *ctx = holder->getContext();
  DenseMap<Operation *, size_t> position;
  size_t n = 0;
  for (Operation &op : block)
    position[&op] = n++;

  // Aliases (ValueAliases.h) share their operand's buffer: the root
  // buffer lives until the last use of any alias.
  DenseMap<Value, Value> rootOf;
  auto root = [&](Value v) {
    auto it = rootOf.find(v);
    return it == rootOf.end() ? v : it->second;
  };
  DenseMap<Value, size_t> end;
  for (Operation &op : block) {
    if (aliases(op))
      rootOf[op.getResult(0)] = root(op.getOperand(0));
    for (Value r : op.getResults()) {
      size_t last = position[&op];
      for (Operation *user : r.getUsers())
        if (Operation *top = block.findAncestorOpInBlock(*user))
          last = std::max(last, position[top]);
      Value base = root(r);
      end[base] = std::max(end.lookup(base), last);
    }
  }

  Arena arena;
  // Buffers by the position of their last use, the earliest on top.
  using Expiry = std::tuple<size_t, int64_t, size_t>; // end, offset, id
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>>
      expiries;
  int64_t arenaSize = 0, noReuse = 0;
  size_t nextId = 0;
  DenseMap<Value, std::pair<int64_t, size_t>> placed; // offset, id
  // The live buffer of |v|'s root if this op is its last use and it holds
  // the result's elements where |v| has them (not a leading slice of the
  // root, not another element width: the kernel writes element j over
  // element j only).
  auto freeAfter = [&](Value v, size_t now,
                       Type result) -> std::optional<int64_t> {
    Value base = root(v);
    auto it = placed.find(base);
    if (it == placed.end() || end.lookup(base) != now ||
        !sameLayout(base.getType(), result) ||
        !sameLayout(v.getType(), result) ||
        !arena.isLive(it->second.first, it->second.second))
      return std::nullopt;
    return it->second.first;
  };
  for (Operation &op : block) {
    size_t now = position[&op];
    if (needsNoStorage(&op) || op.getNumResults() == 0)
      continue;
    while (!expiries.empty() && std::get<0>(expiries.top()) < now) {
      auto [last, offset, id] = expiries.top();
      expiries.pop();
      if (arena.isLive(offset, id))
        arena.erase(offset);
    }
    SmallVector<int64_t> offsets;
    for (auto [k, r] : llvm::enumerate(op.getResults())) {
      if (aliases(op) || !isa<RankedTensorType>(r.getType())) {
        offsets.push_back(-1);
        continue;
      }
      int64_t size = bytesOf(r.getType());
      noReuse += size;
      std::optional<int64_t> over;
      if (std::optional<unsigned> j = inPlaceOperand(&op, unsigned(k)))
        over = freeAfter(op.getOperand(*j), now, r.getType());
      int64_t offset = over ? *over : arena.fit(size);
      size_t last = end.lookup(r);
      arena.insert(Buffer{offset, size, last, nextId}); // replaces |over|'s
      placed[r] = {offset, nextId};
      expiries.emplace(last, offset, nextId++);
      arenaSize = std::max(arenaSize, offset + size);
      offsets.push_back(offset);
    }
    op.setAttr(kernel::kOffsetsAttr, DenseI64ArrayAttr::get(ctx, offsets));
  }
  Type i64 = IntegerType::get(ctx, 64);
  holder->setAttr(kernel::kArenaSizeAttr, IntegerAttr::get(i64, arenaSize));
  holder->setAttr(kernel::kArenaNoReuseAttr, IntegerAttr::get(i64, noReuse));
}

struct KernelPlanMemoryPass
    : ampc::impl::KernelPlanMemoryBase<KernelPlanMemoryPass> {
  void runOnOperation() override {
    for (Operation &op : getOperation().getBody()->getOperations()) {
      if (auto fn = dyn_cast<func::FuncOp>(op); fn && !fn.isExternal())
        planBlock(fn.getBody().front(), fn, /*evaluation=*/false);
      else if (auto model = dyn_cast<graph::ModelOp>(op))
        planBlock(model.getBlock(), model, /*evaluation=*/true);
    }
  }
};

} // namespace

DenseSet<Value> ampc::gradsWrittenInPlace(func::FuncOp grad) {
  DenseSet<Value> inPlace;
  if (grad.isExternal())
    return inPlace;
  auto ret = cast<func::ReturnOp>(grad.getBody().front().getTerminator());
  DenseMap<Value, int> returned;
  for (Value v : ret.getOperands())
    ++returned[v];
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto r = dyn_cast<OpResult>(v);
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!r || returned[v] != 1 || !type || !type.getElementType().isFloat() ||
        !grad.getResultAttr(i, graph::kGradAttr))
      continue;
    Operation *def = r.getOwner();
    auto offsets = def->getAttrOfType<DenseI64ArrayAttr>(kernel::kOffsetsAttr);
    if (aliasesOperand(def, /*evaluation=*/false) ||
        isa<graph::ConstantOp>(def) || !offsets ||
        r.getResultNumber() >= offsets.size() ||
        offsets[r.getResultNumber()] < 0)
      continue;
    inPlace.insert(v);
  }
  return inPlace;
}

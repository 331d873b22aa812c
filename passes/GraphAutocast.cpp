//===- GraphAutocast.cpp - AMP precision placement and casts --------------===//
//
// Decides each op's precision by the policy (passes/amp/Policy.h), inserts
// the graph.cast ops that make operands match, and records the deciding
// rule on the op. Semantics: DESIGN.md "AMP semantics", docs/amp-policy.md.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"
#include "passes/amp/CastCleanup.h"
#include "passes/amp/OpSite.h"
#include "passes/amp/Policy.h"
#include "passes/amp/UnmatchedPins.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MemoryBuffer.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHAUTOCAST
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;
using amp::Category;

namespace {

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

// One precision decision: the element type the op runs in and why.
struct Decision {
  Type type;
  std::string rule;
};

// Casts values to element types, one cast per (value, type), placed right
// after the value's definition so every later use can share it.
class CastCache {
public:
  Value get(Value v, Type element) {
    if (graph::elementTypeOf(v) == element)
      return v;
    Value &slot = cache[{v, element}];
    if (!slot) {
      OpBuilder b(v.getContext());
      b.setInsertionPointAfterValue(v);
      auto type = cast<RankedTensorType>(v.getType()).clone(element);
      slot = graph::CastOp::create(b, v.getLoc(), type, v);
    }
    return slot;
  }

private:
  llvm::DenseMap<std::pair<Value, Type>, Value> cache;
};

struct GraphAutocastPass : ampc::impl::GraphAutocastBase<GraphAutocastPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    if (mode != "fp16" && mode != "bf16")
      return emitError(UnknownLoc::get(ctx))
             << "graph-autocast: mode must be fp16 or bf16, got '" << mode
             << "'";
    if (policy.empty()) {
      policyData = amp::Policy::defaults();
      return success();
    }
    auto file = llvm::MemoryBuffer::getFile(policy);
    if (!file)
      return emitError(UnknownLoc::get(ctx))
             << "cannot read policy file '" << policy
             << "': " << file.getError().message();
    std::string error;
    unsigned line = 0, col = 0;
    policyData =
        amp::Policy::parse((*file)->getBuffer(), error, line, col);
    if (!policyData)
      return emitError(FileLineColLoc::get(ctx, policy, line, col)) << error;
    return success();
  }

  void runOnOperation() override {
    pinMatched.assign(policyData->pins().size(), false);
    sites.clear();
    for (auto model : getOperation().getOps<graph::ModelOp>())
      autocastModel(model);
    // A pin that matches nothing is a mistake the user must hear about.
    for (auto [i, pin] : llvm::enumerate(policyData->pins())) {
      if (pinMatched[i])
        continue;
      emitError(FileLineColLoc::get(&getContext(), policy, pin.policyLine,
                                    pin.policyCol))
          << amp::unmatchedPinMessage(pin, sites);
      signalPassFailure();
    }
  }

  // Notes which policy pins name |op|, whether or not they decide it (a
  // model-file pin wins over them).
  void notePins(Operation *op) {
    amp::OpSite site = amp::siteOf(op->getLoc());
    for (auto [i, pin] : llvm::enumerate(policyData->pins()))
      if (pin.matchesName(site.name) ||
          pin.matchesLoc(site.file, site.line, site.col))
        pinMatched[i] = true;
    sites.push_back(std::move(site));
  }

  Type halfType() {
    return mode == "bf16" ? Type(BFloat16Type::get(&getContext()))
                          : Type(Float16Type::get(&getContext()));
  }

  Type pinType(amp::PinPrecision p) {
    switch (p) {
    case amp::PinPrecision::FP32:
      return Float32Type::get(&getContext());
    case amp::PinPrecision::FP16:
      return Float16Type::get(&getContext());
    case amp::PinPrecision::BF16:
      return BFloat16Type::get(&getContext());
    case amp::PinPrecision::Half:
      return halfType();
    }
    llvm_unreachable("pin");
  }

  // Decides |op|'s precision; |floats| are the indices of its float operands
  // (at least one).
  Decision decide(Operation *op, ArrayRef<unsigned> floats) {
    if (auto pin = op->getAttrOfType<StringAttr>(graph::kPrecisionAttr))
      if (auto p = amp::parsePinPrecision(pin.getValue()))
        return {pinType(*p), "pin (model file)"};

    amp::OpSite site = amp::siteOf(op->getLoc());
    for (const amp::Pin &pin : policyData->pins())
      if (pin.matchesName(site.name) ||
          pin.matchesLoc(site.file, site.line, site.col))
        return {pinType(pin.precision),
                "pin (policy file line " + std::to_string(pin.policyLine) + ")"};

    const amp::OpRule *rule = policyData->lookup(op->getName().getStringRef());
    std::string source;
    if (rule && rule->policyLine)
      source = "policy file line " + std::to_string(rule->policyLine);
    auto withSource = [&](std::string s) {
      return source.empty() ? s : s + " (" + source + ")";
    };

    Type first = graph::elementTypeOf(op->getOperand(floats.front()));
    if (!rule || rule->category == Category::Promote) {
      // The widest input: equal types stay; any mix (f16 with bf16 too)
      // widens to f32, as torch.promote_types does. As in PyTorch's
      // result_type, a rank-0 operand (a scalar parameter or constant) takes
      // no part when a dimensioned float operand is there: `h * temperature`
      // stays half.
      SmallVector<unsigned> voters;
      for (unsigned i : floats) {
        auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
        if (!t || t.getRank() > 0)
          voters.push_back(i);
      }
      bool scalarsOut = !voters.empty() && voters.size() < floats.size();
      if (voters.empty())
        voters.assign(floats.begin(), floats.end());
      Type widest = graph::elementTypeOf(op->getOperand(voters.front()));
      for (unsigned i : voters)
        if (graph::elementTypeOf(op->getOperand(i)) !=
            graph::elementTypeOf(op->getOperand(voters.front())))
          widest = Float32Type::get(&getContext());
      std::string what = "widest input: " + typeName(widest);
      if (scalarsOut)
        what += ", rank-0 operands do not promote";
      if (!rule)
        return {widest, "unlisted (promote, " + what + ")"};
      return {widest, withSource("promote (" + what + ")")};
    }
    switch (rule->category) {
    case Category::Lower:
      return {halfType(),
              "lower-list (" + (source.empty() ? rule->group : source) + ")"};
    case Category::FP32:
      return {Float32Type::get(&getContext()),
              "fp32-list (" + (source.empty() ? rule->group : source) + ")"};
    case Category::Follow:
      return {first, withSource("follows operand " +
                                std::to_string(floats.front()))};
    case Category::Promote:
      break;
    }
    llvm_unreachable("category");
  }

  void autocastModel(graph::ModelOp model) {
    Block &body = model.getBlock();
    graph::OutputOp output = model.getOutputOp();
    SmallVector<Type> declared(output.getValues().getTypes());
    Builder b(&getContext());
    CastCache casts;

    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (isa<graph::InputOp, graph::ParamOp, graph::BufferOp, graph::OutputOp,
              graph::ConstantOp, graph::CastOp>(op) ||
          !isa<graph::GraphDialect>(op.getDialect()))
        continue;
      notePins(&op);
      SmallVector<unsigned> floats;
      for (auto [i, v] : llvm::enumerate(op.getOperands()))
        // Buffers are FP32 state the op updates in place: never cast.
        if (isa<FloatType>(graph::elementTypeOf(v)) &&
            !isa_and_nonnull<graph::BufferOp>(v.getDefiningOp()))
          floats.push_back(i);
      if (floats.empty()) {
        // Integer tensors (token ids, labels) are never cast.
        Type t = op.getNumResults() ? graph::elementTypeOf(op.getResult(0))
                                    : graph::elementTypeOf(op.getOperand(0));
        op.setAttr(amp::kPrecisionAttr, b.getStringAttr(amp::precisionName(t)));
        op.setAttr(amp::kRuleAttr, b.getStringAttr("integer (never cast)"));
        continue;
      }
      Decision d = decide(&op, floats);
      for (unsigned i : floats)
        op.setOperand(i, casts.get(op.getOperand(i), d.type));
      // Float results have the operands' element type (GraphShapes.cpp).
      for (OpResult r : op.getResults())
        if (isa<FloatType>(graph::elementTypeOf(r)))
          r.setType(cast<RankedTensorType>(r.getType()).clone(d.type));
      op.setAttr(amp::kPrecisionAttr, b.getStringAttr(amp::precisionName(d.type)));
      op.setAttr(amp::kRuleAttr, b.getStringAttr(d.rule));
    }

    // The model's interface does not change: outputs that now are half
    // (logits, say) are cast back to their declared types.
    for (auto [i, type] : llvm::enumerate(declared)) {
      Value v = output.getOperand(i);
      if (v.getType() != type)
        output.setOperand(i, casts.get(v, cast<RankedTensorType>(type)
                                              .getElementType()));
    }
    amp::cleanupCasts(body);
  }

  std::optional<amp::Policy> policyData;
  std::vector<bool> pinMatched;
  std::vector<amp::OpSite> sites;
};

} // namespace

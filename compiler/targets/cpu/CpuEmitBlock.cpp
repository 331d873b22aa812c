//===- CpuEmitBlock.cpp - Function bodies: loops, library calls, aliases --===//
//
// One statement group per op, each headed by the IR it comes from, so the
// C++ can be read side by side with `--dump-ir`. The shared walk is
// common/EmitBlock.h; here: fused regions as plain loops (over blocks where
// they touch binary16), constants filled in place.
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cpu/CpuEmitterImpl.h"
#include "compiler/targets/common/EmitBlock.h"

#include <algorithm>

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;

const TargetSyntax ampc::cpu_emit::kCpuSyntax = {
    /*name=*/"CPU",
    /*target=*/"cpu",
    /*library=*/"ampc::cpu",
    /*elementType=*/cppElementType,
    /*mathPrefix=*/"std::",
    /*mathSuffix=*/"",
    /*scalarQualifiers=*/"inline",
    /*roundHelper=*/"round",
    /*fusedNoun=*/"loop",
    // Dropout masks differ per data-parallel rank.
    /*dropoutExtraAttrs=*/", {\"shard\", shard()}",
    /*arithPrefix=*/"",
    /*arithSuffix=*/"",
};

namespace {

class CpuBlockEmitter : public BlockEmitter {
public:
  CpuBlockEmitter(BlockEnv &env, raw_indented_ostream &os)
      : BlockEmitter(cpu_emit::kCpuSyntax, env, os) {}

private:
  LogicalResult emitFused(kernel::FusedElementwiseOp op) override {
    auto shape = cast<RankedTensorType>(op.getResult(0).getType()).getShape();
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    os << "// ";
    llvm::interleaveComma(op.getResults(), os,
                          [&](Value v) { os << env.ssaName(v); });
    os << " = fused loop:";
    for (Operation &inner : op.getBody().front().without_terminator())
      os << " " << inner.getName().getStringRef().drop_front(6);
    os << "\n";
    SmallVector<std::string> inputs, index, results;
    for (Value in : op.getInputs()) {
      inputs.push_back(env[in]);
      index.push_back(
          broadcastIndex(cast<RankedTensorType>(in.getType()).getShape(),
                         shape));
    }
    for (Value r : op.getResults())
      results.push_back(env[r]);
    if (touchesHalf(op))
      return emitHalfBlocks(op, count, inputs, index, results);
    os << "for (int64_t i = 0; i < " << count << "; ++i) {\n";
    os.indent();
    if (failed(emitFusedBody(op, inputs, index, results, os)))
      return failure();
    os.unindent();
    os << "}\n";
    return success();
  }

  static bool isHalf(Type type) {
    return getElementTypeOrSelf(type).isF16();
  }

  static bool touchesHalf(kernel::FusedElementwiseOp op) {
    Block &region = op.getBody().front();
    return llvm::any_of(region.getArgumentTypes(), isHalf) ||
           llvm::any_of(region.without_terminator(), [](Operation &inner) {
             return llvm::any_of(inner.getResultTypes(), isHalf);
           }) ||
           llvm::any_of(op.getResultTypes(), isHalf);
  }

  // A region that reads, rounds to or writes binary16 runs over blocks of
  // (up to) 256 elements, one op at a time: GCC 12 keeps each _Float16
  // conversion scalar and with it the whole element-at-a-time loop, while
  // here every op's loop is float math that vectorizes and the binary16
  // conversions go 8 at a time (runtime/cpu/HalfBlocks.h). Each op still
  // rounds once to its type, so every value is the element loop's (the
  // gpt_tiny fp16 step: 40% less CPU time, cnn's 17%).
  LogicalResult emitHalfBlocks(kernel::FusedElementwiseOp op, int64_t count,
                               ArrayRef<std::string> inputs,
                               ArrayRef<std::string> index,
                               ArrayRef<std::string> results) {
    const int64_t kHalfBlock = std::clamp<int64_t>(count, 1, 256);
    Block &region = op.getBody().front();
    os << "for (int64_t i0 = 0; i0 < " << count << "; i0 += " << kHalfBlock
       << ") {\n";
    os.indent();
    os << "const int64_t n = std::min<int64_t>(" << kHalfBlock << ", "
       << count << " - i0);\n";
    // A loop over the block; |usesI|: the statement reads the element
    // index i (a load's or a store's index; no formula does).
    auto loop = [&](StringRef statement, bool usesI) {
      os << "for (int64_t l = 0; l < n; ++l) {\n";
      os.indent();
      if (usesI)
        os << "const int64_t i = i0 + l;\n";
      os << statement << "\n";
      os.unindent();
      os << "}\n";
    };
    DenseMap<Value, std::string> block;
    for (auto [j, arg] : llvm::enumerate(region.getArguments())) {
      std::string x = "x" + std::to_string(j);
      os << "float " << x << "[" << kHalfBlock << "];\n";
      if (isHalf(arg.getType()) && index[j] == "i")
        os << "ampc::cpu::halfToFloat(" << inputs[j] << " + i0, " << x
           << ", n);\n";
      else
        loop(x + "[l] = float(" + inputs[j] + "[" + index[j] + "]);",
             index[j] != "0");
      block[arg] = x;
    }
    int next = 0;
    for (Operation &inner : region.without_terminator()) {
      SmallVector<std::string> operands;
      for (Value v : inner.getOperands())
        operands.push_back(block.lookup(v) + "[l]");
      FailureOr<std::string> f = formula(&inner, operands);
      if (failed(f))
        return inner.emitError() << "the " << t.name << " emitter has no "
                                 << t.fusedNoun << " formula for "
                                 << inner.getName();
      std::string y = "y" + std::to_string(next++);
      Type type = inner.getResult(0).getType();
      os << "// " << inner.getName().getStringRef() << "\n";
      os << "float " << y << "[" << kHalfBlock << "];\n";
      // Round to the op's type at the op boundary, as the element loop does
      // (a binary16 result only stored is rounded by the store).
      if (isHalf(type)) {
        loop(y + "[l] = " + *f + ";", false);
        if (!llvm::all_of(inner.getResult(0).getUsers(), [](Operation *u) {
              return isa<kernel::YieldOp>(u);
            }))
          os << "ampc::cpu::roundThroughHalf(" << y << ", n);\n";
      } else {
        loop(y + "[l] = round<" + cppElementType(type) + ">(" + *f + ");",
             false);
      }
      block[inner.getResult(0)] = y;
    }
    auto yield = cast<kernel::YieldOp>(region.getTerminator());
    for (auto [j, v] : llvm::enumerate(yield.getValues())) {
      if (isHalf(v.getType()))
        os << "ampc::cpu::floatToHalf(" << block.lookup(v) << ", "
           << results[j] << " + i0, n);\n";
      else
        loop(results[j] + "[i] = " + cppElementType(v.getType()) + "(" +
                 block.lookup(v) + "[l]);",
             true);
    }
    os.unindent();
    os << "}\n";
    return success();
  }

  LogicalResult emitConstant(graph::ConstantOp op) override {
    Value r = op.getResult();
    auto type = cast<RankedTensorType>(r.getType());
    std::string elt = cppElementType(type);
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return op.emitError() << "the CPU emitter needs dense constants";
    os << "// " << env.ssaName(r) << " = graph.constant\n";
    if (dense.isSplat()) {
      os << "std::fill_n(" << env[r] << ", " << type.getNumElements() << ", "
         << elementLiteral(dense.getSplatValue<Attribute>(), elt) << ");\n";
      return success();
    }
    os << "{\n";
    os.indent();
    os << "static const " << elt << " values[] = {";
    llvm::interleaveComma(dense.getValues<Attribute>(), os, [&](Attribute a) {
      os << elementLiteral(a, elt);
    });
    os << "};\n";
    os << "std::copy(std::begin(values), std::end(values), " << env[r]
       << ");\n";
    os.unindent();
    os << "}\n";
    return success();
  }
};

} // namespace

LogicalResult ampc::cpu_emit::emitBlock(Block &block, BlockEnv &env,
                                        raw_indented_ostream &os) {
  return CpuBlockEmitter(env, os).emitBlock(block);
}

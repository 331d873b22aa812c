//===- CpuEmitBlock.cpp - Function bodies: loops, library calls, aliases --===//
//
// One statement group per op, each headed by the IR it comes from, so the
// C++ can be read side by side with `--dump-ir`. The shared walk is
// common/EmitBlock.h; here: fused regions as plain loops, constants filled
// in place.
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cpu/CpuEmitterImpl.h"
#include "compiler/targets/common/EmitBlock.h"

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
    os << "for (int64_t i = 0; i < " << count << "; ++i) {\n";
    os.indent();
    SmallVector<std::string> inputs, index, results;
    for (Value in : op.getInputs()) {
      inputs.push_back(env[in]);
      index.push_back(
          broadcastIndex(cast<RankedTensorType>(in.getType()).getShape(),
                         shape));
    }
    for (Value r : op.getResults())
      results.push_back(env[r]);
    if (failed(emitFusedBody(op, inputs, index, results, os)))
      return failure();
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

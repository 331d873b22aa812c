//===- CpuEmitBlock.cpp - Function bodies: loops, library calls, aliases --===//
//
// One statement group per op, each headed by the IR it comes from, so the
// C++ can be read side by side with `--dump-ir`.
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cpu/CpuEmitterImpl.h"
#include "dialects/Kernel/KernelOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::cpu_emit;

// Shared with the CUDA emitter (CpuEmitterImpl.h).
// How the loop index |i| over |out| reads an operand of shape |in| that
// broadcasts to it (numpy rules).
std::string ampc::cpu_emit::broadcastIndex(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  if (in == out)
    return "i";
  int64_t inCount = 1;
  for (int64_t d : in)
    inCount *= d;
  if (inCount == 1)
    return "0";
  size_t rank = out.size();
  SmallVector<int64_t> padded(rank - in.size(), 1);
  padded.append(in.begin(), in.end());
  // A trailing block (a bias): i modulo its size.
  size_t first = 0;
  while (padded[first] == 1)
    ++first;
  if (llvm::equal(ArrayRef(padded).drop_front(first),
                  out.drop_front(first)))
    return "i % " + std::to_string(inCount);
  // General: rebuild the operand's index dimension by dimension.
  std::string expr;
  int64_t outStride = 1, inStride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (padded[d] != 1) {
      std::string term = "(i / " + std::to_string(outStride) + " % " +
                         std::to_string(out[d]) + ")";
      if (inStride != 1)
        term += " * " + std::to_string(inStride);
      expr = expr.empty() ? term : term + " + " + expr;
    }
    outStride *= out[d];
    inStride *= padded[d];
  }
  return expr;
}

namespace {

std::string approximate(Operation *op) {
  auto a = op->getAttrOfType<StringAttr>("approximate");
  return a && a.getValue() == "tanh" ? "tanh" : "erf";
}

// The scalar formula of one elementwise op on float operands |a| (and |b|),
// the same formulas as the CPU kernel library (runtime/cpu/Elementwise.cpp).
FailureOr<std::string> formula(Operation *op, ArrayRef<std::string> x) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("graph.");
  auto bin = [&](StringRef sign) {
    return x[0] + " " + sign.str() + " " + x[1];
  };
  if (name == "add")
    return bin("+");
  if (name == "sub")
    return bin("-");
  if (name == "mul")
    return bin("*");
  if (name == "div")
    return bin("/");
  if (name == "neg")
    return "-" + x[0];
  if (name == "relu")
    return "relu(" + x[0] + ")";
  if (name == "tanh" || name == "exp" || name == "log" || name == "sqrt")
    return "std::" + name.str() + "(" + x[0] + ")";
  if (name == "sigmoid")
    return "1.0f / (1.0f + std::exp(-" + x[0] + "))";
  if (name == "rsqrt")
    return "1.0f / std::sqrt(" + x[0] + ")";
  if (name == "gelu")
    return "gelu_" + approximate(op) + "(" + x[0] + ")";
  if (name == "gelu_backward")
    return "gelu_" + approximate(op) + "_grad(" + x[0] + ", " + x[1] + ")";
  if (name == "relu_backward")
    return x[0] + " > 0.0f ? " + x[1] + " : 0.0f";
  if (name == "cast" || name == "broadcast_to")
    return x[0];
  if (name == "pow") {
    double e = cast<FloatAttr>(op->getAttr("exponent")).getValueAsDouble();
    if (float(e) == 2.0f) // the square, exactly (as torch special-cases it)
      return x[0] + " * " + x[0];
    return "std::pow(" + x[0] + ", float(" + doubleLiteral(e) + "))";
  }
  return failure();
}

LogicalResult emitFused(kernel::FusedElementwiseOp op, BlockEnv &env,
                        raw_indented_ostream &os) {
  auto shape = cast<RankedTensorType>(op.getResult(0).getType()).getShape();
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  Block &body = op.getBody().front();
  os << "// ";
  llvm::interleaveComma(op.getResults(), os,
                        [&](Value v) { os << env.ssaName(v); });
  os << " = fused loop:";
  for (Operation &inner : body.without_terminator())
    os << " " << inner.getName().getStringRef().drop_front(6);
  os << "\n";
  os << "for (int64_t i = 0; i < " << count << "; ++i) {\n";
  os.indent();
  DenseMap<Value, std::string> scalar;
  int next = 0;
  for (auto [arg, in] : llvm::zip(body.getArguments(), op.getInputs())) {
    std::string s = "x" + std::to_string(next++);
    auto inShape = cast<RankedTensorType>(in.getType()).getShape();
    os << "const float " << s << " = float(" << env[in] << "["
       << broadcastIndex(inShape, shape) << "]);\n";
    scalar[arg] = s;
  }
  next = 0;
  for (Operation &inner : body.without_terminator()) {
    SmallVector<std::string> operands;
    for (Value v : inner.getOperands())
      operands.push_back(scalar.lookup(v));
    FailureOr<std::string> f = formula(&inner, operands);
    if (failed(f))
      return inner.emitError() << "the CPU emitter has no loop formula for "
                               << inner.getName();
    std::string s = "y" + std::to_string(next++);
    // Round to the op's type at the op boundary: fusing changes no number.
    os << "const float " << s << " = round<"
       << cppElementType(inner.getResult(0).getType()) << ">(" << *f
       << ");  // " << inner.getName().getStringRef() << "\n";
    scalar[inner.getResult(0)] = s;
  }
  auto yield = cast<kernel::YieldOp>(body.getTerminator());
  for (auto [v, r] : llvm::zip(yield.getValues(), op.getResults()))
    os << env[r] << "[i] = " << cppElementType(r.getType()) << "("
       << scalar.lookup(v) << ");\n";
  os.unindent();
  os << "}\n";
  return success();
}

// One attribute as an ampc::cpu::Attrs entry; false when it has no C++ form.
bool printAttr(NamedAttribute attr, raw_ostream &os) {
  std::string name = attr.getName().str();
  Attribute a = attr.getValue();
  std::string value;
  if (auto b = dyn_cast<BoolAttr>(a))
    value = b.getValue() ? "true" : "false";
  else if (isa<UnitAttr>(a))
    value = "true";
  else if (auto i = dyn_cast<IntegerAttr>(a))
    value = "int64_t(" + std::to_string(i.getInt()) + ")";
  else if (auto f = dyn_cast<FloatAttr>(a))
    value = doubleLiteral(f.getValueAsDouble());
  else if (auto s = dyn_cast<StringAttr>(a))
    value = "std::string(\"" + s.getValue().str() + "\")";
  else if (auto arr = dyn_cast<DenseI64ArrayAttr>(a))
    value = "std::vector<int64_t>" + shapeList(arr.asArrayRef());
  else
    return false;
  os << "{\"" << name << "\", " << value << "}";
  return true;
}

std::string tensorRef(Value v, const std::string &data) {
  auto t = cast<RankedTensorType>(v.getType());
  return "{" + data + ", " + dtypeOf(t) + ", " + std::to_string(t.getRank()) +
         ", " + shapeList(t.getShape()) + "}";
}

LogicalResult emitLibraryCall(Operation *op, BlockEnv &env,
                              raw_indented_ostream &os) {
  StringRef opName = op->getName().getStringRef();
  if (op->getNumOperands() == 0 || op->getNumResults() == 0)
    return op->emitError() << "the CPU emitter calls kernels with operands "
                              "and results only";
  os << "{  // ";
  llvm::interleaveComma(op->getResults(), os,
                        [&](Value v) { os << env.ssaName(v); });
  os << " = " << opName << "\n";
  os.indent();
  // Operands in ODS order; an absent optional operand followed by a present
  // one is a null reference (the kernel library's convention).
  SmallVector<std::string> refs;
  DenseI32ArrayAttr sizes;
  if (auto props = dyn_cast_or_null<DictionaryAttr>(
          op->getPropertiesAsAttribute()))
    sizes = props.getAs<DenseI32ArrayAttr>("operandSegmentSizes");
  if (sizes) {
    unsigned next = 0;
    for (int32_t size : sizes.asArrayRef()) {
      if (size == 0)
        refs.push_back("{nullptr, DType::F32, 0, {}}");
      for (int32_t k = 0; k < size; ++k, ++next)
        refs.push_back(tensorRef(op->getOperand(next),
                                 env[op->getOperand(next)]));
    }
    while (!refs.empty() && refs.back().starts_with("{nullptr"))
      refs.pop_back();
  } else {
    for (Value v : op->getOperands())
      refs.push_back(tensorRef(v, env[v]));
  }
  os << "const TensorRef in[] = {";
  llvm::interleaveComma(refs, os);
  os << "};\n";
  os << "const TensorRef out[] = {";
  llvm::interleaveComma(op->getResults(), os,
                        [&](Value v) { os << tensorRef(v, env[v]); });
  os << "};\n";
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute a : op->getAttrs()) {
    StringRef n = a.getName().getValue();
    // Dialect attributes (the memory plan, AMP notes) and the precision pin
    // are not kernel arguments.
    if (n.contains('.') || n == graph::kPrecisionAttr ||
        n == "operandSegmentSizes")
      continue;
    attrs.push_back(a);
  }
  bool dropout = opName == "graph.dropout";
  // Constant attributes are built once; dropout's step changes per call.
  os << (dropout ? "const" : "static const") << " ampc::cpu::Attrs attrs{";
  bool first = true;
  for (NamedAttribute a : attrs) {
    std::string s;
    llvm::raw_string_ostream entry(s);
    if (!printAttr(a, entry))
      return op->emitError() << "the CPU emitter cannot pass attribute '"
                             << a.getName().getValue() << "' to a kernel";
    os << (first ? "" : ", ") << s;
    first = false;
  }
  if (dropout)
    os << (first ? "" : ", ") << "{\"seed\", int64_t(seed_)}, {\"step\", "
       << env.dropoutStep << "}, {\"shard\", shard_}";
  os << "};\n";
  os << "call(" << kernelMember(opName) << ", in, out, attrs);\n";
  os.unindent();
  os << "}\n";
  return success();
}

LogicalResult emitConstant(graph::ConstantOp op, BlockEnv &env,
                           raw_indented_ostream &os) {
  Value r = op.getResult();
  auto t = cast<RankedTensorType>(r.getType());
  std::string type = cppElementType(t);
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "the CPU emitter needs dense constants";
  auto literal = [&](Attribute a) -> std::string {
    if (auto f = dyn_cast<FloatAttr>(a))
      return type + "(" + doubleLiteral(f.getValueAsDouble()) + ")";
    return type + "(" + std::to_string(cast<IntegerAttr>(a).getInt()) + ")";
  };
  os << "// " << env.ssaName(r) << " = graph.constant\n";
  if (dense.isSplat()) {
    os << "std::fill_n(" << env[r] << ", " << t.getNumElements() << ", "
       << literal(dense.getSplatValue<Attribute>()) << ");\n";
    return success();
  }
  os << "{\n";
  os.indent();
  os << "static const " << type << " values[] = {";
  llvm::interleaveComma(dense.getValues<Attribute>(), os,
                        [&](Attribute a) { os << literal(a); });
  os << "};\n";
  os << "std::copy(std::begin(values), std::end(values), " << env[r]
     << ");\n";
  os.unindent();
  os << "}\n";
  return success();
}

// Declares the pointer of every result: into the arena, or aliasing.
LogicalResult declareResults(Operation *op, BlockEnv &env,
                             raw_indented_ostream &os) {
  auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kernel::kOffsetsAttr);
  bool alias = isa<graph::ReshapeOp>(op) ||
               (!env.training && isa<graph::DropoutOp>(op));
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    std::string type = cppElementType(r.getType());
    std::string name = env.fresh("t" + env.ssaName(r).substr(1));
    env.names[r] = name;
    if (alias) {
      os << type << " *" << name << " = " << env[op->getOperand(0)] << ";  // "
         << env.ssaName(r) << " = " << op->getName().getStringRef()
         << " (no copy)\n";
      continue;
    }
    if (!offsets || offsets.size() != op->getNumResults() || offsets[i] < 0)
      return op->emitError()
             << "has no memory plan (run kernel-plan-memory first)";
    os << type << " *" << name << " = reinterpret_cast<" << type
       << " *>(arena + " << offsets[i] << ");\n";
  }
  return success();
}

} // namespace

LogicalResult ampc::cpu_emit::emitBlock(Block &block, BlockEnv &env,
                                        raw_indented_ostream &os) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>() ||
        isa<graph::InputOp, graph::ParamOp>(op))
      continue;
    if (failed(declareResults(&op, env, os)))
      return failure();
    LogicalResult ok =
        TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](kernel::FusedElementwiseOp f) {
              return emitFused(f, env, os);
            })
            .Case([&](graph::ConstantOp c) { return emitConstant(c, env, os); })
            .Case([&](graph::ReshapeOp) { return success(); })
            .Default([&](Operation *o) -> LogicalResult {
              if (!env.training && isa<graph::DropoutOp>(o))
                return success();
              if (o->getDialect() && o->getDialect()->getNamespace() == "graph")
                return emitLibraryCall(o, env, os);
              return o->emitError()
                     << "the CPU emitter cannot print " << o->getName();
            });
    if (failed(ok))
      return failure();
  }
  return success();
}

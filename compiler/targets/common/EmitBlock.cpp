//===- EmitBlock.cpp - Function bodies: result pointers, library calls ----===//
#include "compiler/targets/common/EmitBlock.h"
#include "passes/ValueAliases.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;

namespace {

std::string approximate(Operation *op) {
  auto a = op->getAttrOfType<StringAttr>("approximate");
  return a && a.getValue() == "tanh" ? "tanh" : "erf";
}

// A float attribute of |op| as a float expression of the generated code;
// |dflt| (C++ source) when the attribute is absent.
std::string floatAttr(Operation *op, StringRef name, StringRef dflt) {
  auto a = op->getAttrOfType<FloatAttr>(name);
  return "float(" + (a ? doubleLiteral(a.getValueAsDouble()) : dflt.str()) +
         ")";
}

// One attribute as an ampc::<target>::Attrs entry; false when it has no C++
// form.
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
    value = "std::string(" + quoted(s.getValue()) + ")";
  else if (auto arr = dyn_cast<DenseI64ArrayAttr>(a))
    value = "std::vector<int64_t>" + shapeList(arr.asArrayRef());
  else
    return false;
  os << "{" << quoted(name) << ", " << value << "}";
  return true;
}

std::string tensorRef(Value v, const std::string &data) {
  auto t = cast<RankedTensorType>(v.getType());
  return "{" + data + ", " + dtypeOf(t) + ", " + std::to_string(t.getRank()) +
         ", " + shapeList(t.getShape()) + "}";
}

} // namespace

// The scalar formula of one elementwise op on float operands |x|: a C
// operator, a single libm call, or a call to its one definition in
// runtime/numerics/Elementwise.h (which the kernel libraries and the
// interpreter use too).
FailureOr<std::string> BlockEmitter::formula(Operation *op,
                                             ArrayRef<std::string> x) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("graph.");
  auto bin = [&](StringRef sign) {
    return x[0] + " " + sign.str() + " " + x[1];
  };
  auto arith = [&](StringRef sign, StringRef fn) {
    if (t.arithPrefix.empty())
      return bin(sign);
    return (t.arithPrefix + fn + t.arithSuffix).str() + "(" + x[0] + ", " +
           x[1] + ")";
  };
  if (name == "add")
    return arith("+", "add");
  if (name == "sub")
    return arith("-", "sub");
  if (name == "mul")
    return arith("*", "mul");
  if (name == "div")
    return bin("/");
  if (name == "neg")
    return "-" + x[0];
  if (name == "relu")
    return "ampc::num::relu(" + x[0] + ")";
  if (name == "tanh") // the host's vectorizable one (runtime/numerics/Tanh.h)
    return "ampc::num::math::tanh(" + x[0] + ")";
  if (name == "exp" || name == "log" || name == "sqrt")
    return t.math(name) + "(" + x[0] + ")";
  if (name == "sigmoid")
    return "ampc::num::sigmoid(" + x[0] + ")";
  if (name == "rsqrt")
    return "ampc::num::rsqrt(" + x[0] + ")";
  if (name == "gelu")
    return (approximate(op) == "tanh" ? "ampc::num::geluTanh("
                                      : "ampc::num::geluErf(") +
           x[0] + ")";
  if (name == "gelu_backward")
    return (approximate(op) == "tanh" ? "ampc::num::geluTanhGrad("
                                      : "ampc::num::geluErfGrad(") +
           x[0] + ", " + x[1] + ")";
  if (name == "relu_backward")
    return "ampc::num::reluGrad(" + x[0] + ", " + x[1] + ")";
  if (name == "abs" || name == "erf" || name == "sin" || name == "cos")
    return t.math(name == "abs" ? "fabs" : name) + "(" + x[0] + ")";
  if (name == "reciprocal")
    return "1.0f / " + x[0];
  if (name == "maximum" || name == "minimum")
    return "ampc::num::" + name.str() + "(" + x[0] + ", " + x[1] + ")";
  if (name == "silu")
    return "ampc::num::silu(" + x[0] + ")";
  // The integer condition / mask was loaded as a float: nonzero is true.
  if (name == "where")
    return "(" + x[0] + " != 0.0f ? " + x[1] + " : " + x[2] + ")";
  if (name == "masked_fill")
    return "(" + x[1] + " != 0.0f ? " + floatAttr(op, "value", "0.0") +
           " : " + x[0] + ")";
  if (name == "silu_backward")
    return "ampc::num::siluGrad(" + x[0] + ", " + x[1] + ")";
  if (name == "maximum_backward")
    return "ampc::num::maximumGrad(" + x[0] + ", " + x[1] + ", " + x[2] + ")";
  if (name == "leaky_relu" || name == "leaky_relu_backward") {
    std::string slope = floatAttr(op, "negative_slope", "0.01");
    return name == "leaky_relu"
               ? "ampc::num::leakyRelu(" + x[0] + ", " + slope + ")"
               : "ampc::num::leakyReluGrad(" + x[0] + ", " + x[1] + ", " +
                     slope + ")";
  }
  if (name == "elu" || name == "elu_backward") {
    // PyTorch's coefficients, in float: alpha * scale, scale, input_scale.
    std::string params = "float(" + floatAttr(op, "alpha", "1.0") + " * " +
                         floatAttr(op, "scale", "1.0") + "), " +
                         floatAttr(op, "scale", "1.0") + ", " +
                         floatAttr(op, "input_scale", "1.0");
    return name == "elu" ? "ampc::num::elu(" + x[0] + ", " + params + ")"
                         : "ampc::num::eluGrad(" + x[0] + ", " + x[1] + ", " +
                               params + ")";
  }
  if (name == "softplus" || name == "softplus_backward") {
    std::string params = floatAttr(op, "beta", "1.0") + ", " +
                         floatAttr(op, "threshold", "20.0");
    return name == "softplus"
               ? "ampc::num::softplus(" + x[0] + ", " + params + ")"
               : "ampc::num::softplusGrad(" + x[0] + ", " + x[1] + ", " +
                     params + ")";
  }
  if (name == "clamp" || name == "clamp_backward") {
    std::string bounds = floatAttr(op, "min", "-INFINITY") + ", " +
                         floatAttr(op, "max", "INFINITY");
    return name == "clamp"
               ? "ampc::num::clamp(" + x[0] + ", " + bounds + ")"
               : "ampc::num::clampGrad(" + x[0] + ", " + x[1] + ", " +
                     bounds + ")";
  }
  if (name == "cast" || name == "broadcast_to")
    return x[0];
  if (name == "pow") {
    double e = cast<FloatAttr>(op->getAttr("exponent")).getValueAsDouble();
    return "ampc::num::power(" + x[0] + ", float(" + doubleLiteral(e) + "))";
  }
  return failure();
}

LogicalResult BlockEmitter::emitFusedBody(kernel::FusedElementwiseOp op,
                                          ArrayRef<std::string> inputs,
                                          ArrayRef<std::string> index,
                                          ArrayRef<std::string> results,
                                          raw_indented_ostream &body) {
  Block &region = op.getBody().front();
  DenseMap<Value, std::string> scalar;
  for (auto [j, arg] : llvm::enumerate(region.getArguments())) {
    std::string s = "x" + std::to_string(j);
    body << "const float " << s << " = float(" << inputs[j] << "["
         << index[j] << "]);\n";
    scalar[arg] = s;
  }
  int next = 0;
  for (Operation &inner : region.without_terminator()) {
    SmallVector<std::string> operands;
    for (Value v : inner.getOperands())
      operands.push_back(scalar.lookup(v));
    FailureOr<std::string> f = formula(&inner, operands);
    if (failed(f))
      return inner.emitError() << "the " << t.name << " emitter has no "
                               << t.fusedNoun << " formula for "
                               << inner.getName();
    std::string s = "y" + std::to_string(next++);
    // Round to the op's type at the op boundary: fusing changes no number.
    body << "const float " << s << " = " << t.roundHelper << "<"
         << t.elementType(inner.getResult(0).getType()) << ">(" << *f
         << ");  // " << inner.getName().getStringRef() << "\n";
    scalar[inner.getResult(0)] = s;
  }
  auto yield = cast<kernel::YieldOp>(region.getTerminator());
  for (auto [j, v] : llvm::enumerate(yield.getValues()))
    body << results[j] << "[i] = " << t.elementType(v.getType()) << "("
         << scalar.lookup(v) << ");\n";
  return success();
}

LogicalResult BlockEmitter::emitLibraryCall(Operation *op) {
  StringRef opName = op->getName().getStringRef();
  if (op->getNumOperands() == 0 || op->getNumResults() == 0)
    return op->emitError() << "the " << t.name
                           << " emitter calls kernels with operands and "
                              "results only";
  os << "{  // ";
  llvm::interleaveComma(op->getResults(), os,
                        [&](Value v) { os << env.ssaName(v); });
  os << " = " << opName << "\n";
  os.indent();
  // Operands in ODS order; an absent optional operand followed by a present
  // one is a null reference (the kernel libraries' convention).
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
        refs.push_back(
            tensorRef(op->getOperand(next), env[op->getOperand(next)]));
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
  std::string init;
  llvm::raw_string_ostream attrs(init);
  attrs << "{";
  bool first = true;
  for (NamedAttribute a : op->getAttrs()) {
    StringRef n = a.getName().getValue();
    // Dialect attributes (the memory plan, AMP notes) and the precision pin
    // are not kernel arguments.
    if (n.contains('.') || n == graph::kPrecisionAttr ||
        n == "operandSegmentSizes")
      continue;
    std::string s;
    llvm::raw_string_ostream entry(s);
    if (!printAttr(a, entry))
      return op->emitError() << "the " << t.name
                             << " emitter cannot pass attribute '" << n
                             << "' to a kernel";
    attrs << (first ? "" : ", ") << s;
    first = false;
  }
  // Batch statistics and the running update in the training step, the
  // running statistics in evaluation.
  if (opName == "graph.batch_norm")
    attrs << (first ? "" : ", ") << "{\"training\", "
          << (env.training ? "true" : "false") << "}";
  // Dropout's step changes per call: its attributes are built at the call.
  // All others are constant, built once (EmitSupport.h, AttrMembers).
  if (opName == "graph.dropout") {
    attrs << (first ? "" : ", ") << "{\"seed\", int64_t(seed())}, {\"step\", "
          << env.dropoutStep << "}" << t.dropoutExtraAttrs << "}";
    os << "const " << t.library << "::Attrs attrs" << init << ";\n";
    os << "call(" << kernelMember(opName) << ", in, out, attrs);\n";
  } else {
    attrs << "}";
    assert(env.attrMembers && "the file emitter owns the attribute members");
    os << "call(" << kernelMember(opName) << ", in, out, "
       << env.attrMembers->member(init) << ");\n";
  }
  os.unindent();
  os << "}\n";
  return success();
}

// Declares the pointer of every result: into the arena, or aliasing.
LogicalResult BlockEmitter::declareResults(Operation *op) {
  auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kernel::kOffsetsAttr);
  bool alias = aliasesOperand(op, !env.training);
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    std::string type = t.elementType(r.getType());
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
    auto inPlace = env.inPlace.find(r);
    if (inPlace != env.inPlace.end()) {
      // A half gradient's buffer is untyped (halfGrad(i)).
      std::string where = type == "float" ? inPlace->second
                                          : "static_cast<" + type + " *>(" +
                                                inPlace->second + ")";
      os << type << " *" << name << " = micro == 0 ? " << where
         << " : reinterpret_cast<" << type << " *>(arena + " << offsets[i]
         << ");  // written in place, no storeGrad copy\n";
      continue;
    }
    os << type << " *" << name << " = reinterpret_cast<" << type
       << " *>(arena + " << offsets[i] << ");\n";
  }
  return success();
}

LogicalResult BlockEmitter::emitBlock(Block &block) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>() ||
        isa<graph::InputOp, graph::ParamOp, graph::BufferOp>(op))
      continue;
    if (failed(declareResults(&op)))
      return failure();
    LogicalResult ok =
        TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](kernel::FusedElementwiseOp f) { return emitFused(f); })
            .Case([&](graph::ConstantOp c) { return emitConstant(c); })
            .Default([&](Operation *o) -> LogicalResult {
              if (aliasesOperand(o, !env.training))
                return success(); // declareResults bound the operand
              if (o->getDialect() && o->getDialect()->getNamespace() == "graph")
                return emitLibraryCall(o);
              // Kernel-level row kernels (kernel.add_layer_norm, ...) are
              // library calls too.
              if (isa<kernel::AddLayerNormOp, kernel::LayerNormBackwardAddOp,
                      kernel::AddRmsNormOp, kernel::RmsNormBackwardAddOp>(o))
                return emitLibraryCall(o);
              return o->emitError() << "the " << t.name
                                    << " emitter cannot print "
                                    << o->getName();
            });
    if (failed(ok))
      return failure();
    if (auto after = env.after.find(&op); after != env.after.end())
      for (const std::function<void()> &print : after->second)
        print();
  }
  return success();
}

//===- CudaEmitBlock.cpp - Function bodies: kernels, library calls ---------===//
//
// One statement group per op, headed by the IR it comes from. Fused
// elementwise regions become one grid-stride __global__ kernel each (every
// inner op rounds to its result type, as on the CPU target); when every
// operand is read at the loop index and the count is a multiple of 4, each
// thread handles 4 consecutive elements (wider, aligned accesses).
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cuda/CudaEmitterImpl.h"
#include "dialects/Kernel/KernelOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::cpu_emit;
using namespace ampc::cuda_emit;

std::string ampc::cuda_emit::cudaElementType(Type type) {
  std::string t = cppElementType(type);
  if (t == "half")
    return "__half";
  if (t == "bf16")
    return "__nv_bfloat16";
  return t;
}

namespace {

std::string approximate(Operation *op) {
  auto a = op->getAttrOfType<StringAttr>("approximate");
  return a && a.getValue() == "tanh" ? "tanh" : "erf";
}

// The scalar formula of one elementwise op on float operands, the same
// formulas as runtime/cuda/Elementwise.cu.
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
    return name.str() + "f(" + x[0] + ")";
  if (name == "sigmoid")
    return "1.0f / (1.0f + expf(-" + x[0] + "))";
  if (name == "rsqrt")
    return "1.0f / sqrtf(" + x[0] + ")";
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
    if (float(e) == 2.0f)
      return x[0] + " * " + x[0];
    return "powf(" + x[0] + ", float(" + doubleLiteral(e) + "))";
  }
  return failure();
}

LogicalResult emitFused(kernel::FusedElementwiseOp op, BlockEnv &env,
                        FileParts &parts, raw_indented_ostream &os) {
  auto shape = cast<RankedTensorType>(op.getResult(0).getType()).getShape();
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  Block &body = op.getBody().front();
  std::string name = "fused_" + std::to_string(parts.nextKernel++);

  // Operands: pointers with their index expressions.
  SmallVector<std::string> params, args, index;
  bool flat = true;
  for (auto [k, in] : llvm::enumerate(op.getInputs())) {
    auto inShape = cast<RankedTensorType>(in.getType()).getShape();
    params.push_back("const " + cudaElementType(in.getType()) +
                     " *__restrict__ a" + std::to_string(k));
    args.push_back(env[in]);
    index.push_back(broadcastIndex(inShape, shape));
    flat &= index.back() == "i";
  }
  for (auto [k, r] : llvm::enumerate(op.getResults())) {
    params.push_back(cudaElementType(r.getType()) + " *__restrict__ r" +
                     std::to_string(k));
    args.push_back(env[r]);
  }
  // Four elements per thread when every access is at the loop index.
  bool vec4 = flat && count % 4 == 0;

  std::string k;
  llvm::raw_string_ostream ks(k);
  ks << "// " << name << ":";
  for (Operation &inner : body.without_terminator())
    ks << " " << inner.getName().getStringRef().drop_front(6);
  ks << "\n__global__ void __launch_bounds__(256) " << name << "(";
  llvm::interleaveComma(params, ks);
  ks << ") {\n";
  if (vec4)
    ks << "  for (int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; "
          "q < "
       << count / 4
       << "; q += int64_t(gridDim.x) * blockDim.x) {\n"
          "#pragma unroll\n"
          "  for (int64_t i = 4 * q; i < 4 * q + 4; ++i) {\n";
  else
    ks << "  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; "
          "i < "
       << count << "; i += int64_t(gridDim.x) * blockDim.x) {\n  {\n";
  DenseMap<Value, std::string> scalar;
  for (auto [j, arg] : llvm::enumerate(body.getArguments())) {
    std::string s = "x" + std::to_string(j);
    ks << "    const float " << s << " = float(a" << j << "[" << index[j]
       << "]);\n";
    scalar[arg] = s;
  }
  int next = 0;
  for (Operation &inner : body.without_terminator()) {
    SmallVector<std::string> operands;
    for (Value v : inner.getOperands())
      operands.push_back(scalar.lookup(v));
    FailureOr<std::string> f = formula(&inner, operands);
    if (failed(f))
      return inner.emitError() << "the CUDA emitter has no kernel formula for "
                               << inner.getName();
    std::string s = "y" + std::to_string(next++);
    ks << "    const float " << s << " = rnd<"
       << cudaElementType(inner.getResult(0).getType()) << ">(" << *f
       << ");  // " << inner.getName().getStringRef() << "\n";
    scalar[inner.getResult(0)] = s;
  }
  auto yield = cast<kernel::YieldOp>(body.getTerminator());
  for (auto [j, v] : llvm::enumerate(yield.getValues()))
    ks << "    r" << j << "[i] = " << cudaElementType(v.getType()) << "("
       << scalar.lookup(v) << ");\n";
  ks << "  }\n  }\n}\n\n";
  parts.kernels += k;

  os << "// ";
  llvm::interleaveComma(op.getResults(), os,
                        [&](Value v) { os << env.ssaName(v); });
  os << " = fused kernel " << name << "\n";
  os << name << "<<<grid(" << (vec4 ? count / 4 : count)
     << "), 256, 0, stream_>>>(";
  llvm::interleaveComma(args, os);
  os << ");\n";
  return success();
}

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
    return op->emitError() << "the CUDA emitter calls kernels with operands "
                              "and results only";
  os << "{  // ";
  llvm::interleaveComma(op->getResults(), os,
                        [&](Value v) { os << env.ssaName(v); });
  os << " = " << opName << "\n";
  os.indent();
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
  bool dropout = opName == "graph.dropout";
  os << (dropout ? "const" : "static const") << " ampc::cuda::Attrs attrs{";
  bool first = true;
  for (NamedAttribute a : op->getAttrs()) {
    StringRef n = a.getName().getValue();
    if (n.contains('.') || n == graph::kPrecisionAttr ||
        n == "operandSegmentSizes")
      continue;
    std::string s;
    llvm::raw_string_ostream entry(s);
    if (!printAttr(a, entry))
      return op->emitError() << "the CUDA emitter cannot pass attribute '"
                             << n << "' to a kernel";
    os << (first ? "" : ", ") << s;
    first = false;
  }
  if (dropout)
    os << (first ? "" : ", ") << "{\"seed\", int64_t(seed_)}, {\"step\", "
       << env.dropoutStep << "}";
  os << "};\n";
  os << "call(" << kernelMember(opName) << ", in, out, attrs);\n";
  os.unindent();
  os << "}\n";
  return success();
}

std::string literal(Attribute a, const std::string &type) {
  if (auto f = dyn_cast<FloatAttr>(a))
    return type + "(" + doubleLiteral(f.getValueAsDouble()) + ")";
  return type + "(" + std::to_string(cast<IntegerAttr>(a).getInt()) + ")";
}

LogicalResult emitConstant(graph::ConstantOp op, BlockEnv &env,
                           FileParts &parts, raw_indented_ostream &os) {
  Value r = op.getResult();
  auto t = cast<RankedTensorType>(r.getType());
  std::string type = cudaElementType(t);
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "the CUDA emitter needs dense constants";
  os << "// " << env.ssaName(r) << " = graph.constant\n";
  if (dense.isSplat()) {
    // float() first: __half / __nv_bfloat16 have no double constructor on
    // every toolkit.
    std::string hostType = type == "__half" || type == "__nv_bfloat16"
                               ? "float"
                               : type;
    os << "fill<<<grid(" << t.getNumElements() << "), 256, 0, stream_>>>("
       << env[r] << ", " << t.getNumElements() << ", " << type << "("
       << literal(dense.getSplatValue<Attribute>(), hostType) << "));\n";
    return success();
  }
  FileParts::Constant c;
  c.type = type == "__half" || type == "__nv_bfloat16" ? "float" : type;
  llvm::raw_string_ostream vs(c.values);
  vs << "{";
  llvm::interleaveComma(dense.getValues<Attribute>(), vs,
                        [&](Attribute a) { vs << literal(a, c.type); });
  vs << "}";
  c.bytes = byteSize(t);
  if (c.type != type)
    return op.emitError() << "the CUDA emitter supports non-splat constants "
                             "of f32 and integer types only";
  os << "check(cudaMemcpyAsync(" << env[r] << ", constants_["
     << parts.constants.size() << "], " << c.bytes
     << ", cudaMemcpyDeviceToDevice, stream_), \"constant\");\n";
  parts.constants.push_back(std::move(c));
  return success();
}

LogicalResult declareResults(Operation *op, BlockEnv &env,
                             raw_indented_ostream &os) {
  auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kernel::kOffsetsAttr);
  bool alias = isa<graph::ReshapeOp>(op) ||
               (!env.training && isa<graph::DropoutOp>(op));
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    std::string type = cudaElementType(r.getType());
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

LogicalResult ampc::cuda_emit::emitCudaBlock(Block &block, BlockEnv &env,
                                             FileParts &parts,
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
              return emitFused(f, env, parts, os);
            })
            .Case([&](graph::ConstantOp c) {
              return emitConstant(c, env, parts, os);
            })
            .Case([&](graph::ReshapeOp) { return success(); })
            .Default([&](Operation *o) -> LogicalResult {
              if (!env.training && isa<graph::DropoutOp>(o))
                return success();
              if (o->getDialect() && o->getDialect()->getNamespace() == "graph")
                return emitLibraryCall(o, env, os);
              return o->emitError()
                     << "the CUDA emitter cannot print " << o->getName();
            });
    if (failed(ok))
      return failure();
  }
  return success();
}

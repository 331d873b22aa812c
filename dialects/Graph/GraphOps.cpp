//===- GraphOps.cpp - Structure ops, folders, custom syntax ---------------===//
//
// Shape inference and verifiers of the compute ops live in GraphShapes.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/ConvertUTF.h"

using namespace mlir;
using namespace ampc::graph;

bool ampc::graph::computesInFP32(Operation *op) {
  if (auto ce = dyn_cast<CrossEntropyOp>(op)) // probability labels: no
    return isa<IntegerType>(elementTypeOf(ce.getLabels()));
  return isa<CrossEntropyBackwardOp, CrossEntropyWithGradOp, LayerNormOp,
             LayerNormBackwardOp, RmsNormOp, RmsNormBackwardOp>(op);
}

LogicalResult ampc::graph::verifyPrecisionPin(Operation *op) {
  Attribute attr = op->getAttr(kPrecisionAttr);
  if (!attr)
    return success();
  auto str = dyn_cast<StringAttr>(attr);
  if (!str || !llvm::is_contained({"fp32", "fp16", "bf16", "half"},
                                  str.getValue()))
    return op->emitOpError()
           << "precision pin must be \"fp32\", \"fp16\", \"bf16\" or \"half\"";
  return success();
}

//===----------------------------------------------------------------------===//
// ModelOp
//===----------------------------------------------------------------------===//

OutputOp ModelOp::getOutputOp() {
  return cast<OutputOp>(getBlock().getTerminator());
}

// Why |name| cannot name an input, parameter, output or model ("" when it
// can): names reach generated C++, checkpoints (safetensors JSON), metrics
// and --help text, so they are printable UTF-8.
static std::string nameProblem(StringRef name) {
  const auto *bytes = reinterpret_cast<const llvm::UTF8 *>(name.data());
  if (!llvm::isLegalUTF8String(&bytes, bytes + name.size()))
    return "is not valid UTF-8 (at byte " +
           std::to_string(reinterpret_cast<const char *>(bytes) -
                          name.data()) +
           ")";
  for (size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    unsigned code = 0xA0; // printable
    if (c < 0x80)
      code = c;
    // C1 controls U+0080..U+009F are 0xC2 0x80..0x9F in UTF-8.
    else if (c == 0xC2 && static_cast<unsigned char>(name[i + 1]) < 0xA0)
      code = static_cast<unsigned char>(name[i + 1]);
    if (code < 0x20 || (code >= 0x7F && code < 0xA0)) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "U+%04X", code);
      return std::string("holds the control character ") + buf +
             " (at byte " + std::to_string(i) + ")";
    }
  }
  return "";
}

// |name| quoted for diagnostics: control characters (and, in a name that
// is not UTF-8, every non-ASCII byte) as \XX.
static std::string shown(StringRef name) {
  const auto *bytes = reinterpret_cast<const llvm::UTF8 *>(name.data());
  bool utf8 = llvm::isLegalUTF8String(&bytes, bytes + name.size());
  std::string s = "\"";
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8) || c == '"' ||
        c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%02X", unsigned(c));
      s += buf;
    } else {
      s += ch;
    }
  }
  return s + "\"";
}

// Why |type| is too large to hold ("" when it is not): its element count
// or byte size overflows int64_t or passes 2^48 bytes (256 TiB), the most
// any tensor of a model may take, so that every size computed from it
// later (arena offsets, byte counts, summaries) fits. A dimension of size 0
// is rejected as well: shape arithmetic (the VJPs' leading-axes products,
// per-row sizes) divides by dimensions, and an empty tensor trains nothing.
static std::string sizeProblem(Type type) {
  if (isa<UnrankedTensorType>(type))
    return "is unranked; shapes are static";
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t)
    return "";
  // Dynamic dims are INT64_MIN inside: every size computed later would
  // overflow (fuzzer finding under UBSan).
  if (!t.hasStaticShape())
    return "has a dynamic dimension ('?'); shapes are static";
  if (llvm::is_contained(t.getShape(), 0))
    return "has a dimension of size 0; empty tensors are not supported";
  constexpr int64_t kMaxBytes = int64_t(1) << 48;
  int64_t elements = 1;
  for (int64_t d : t.getShape())
    if (llvm::MulOverflow(elements, d, elements))
      return "has more elements than a 64-bit count holds";
  Type e = t.getElementType();
  int64_t width = e.isIntOrFloat() ? (e.getIntOrFloatBitWidth() + 7) / 8 : 1;
  int64_t bytes;
  if (llvm::MulOverflow(elements, width, bytes) || bytes > kMaxBytes)
    return "has " + std::to_string(elements) +
           " elements, more than the 2^48 bytes a tensor may take";
  return "";
}

LogicalResult ModelOp::verify() {
  // Sizes first: the ops' own verifiers multiply dimensions too.
  for (Operation &op : getBlock()) {
    for (Type type : op.getResultTypes())
      if (std::string why = sizeProblem(type); !why.empty())
        return op.emitOpError() << "result type " << type << " " << why;
    for (Type type : op.getOperandTypes())
      if (std::string why = sizeProblem(type); !why.empty())
        return op.emitOpError() << "operand type " << type << " " << why;
  }
  if (std::string why = nameProblem(getSymName()); !why.empty())
    return emitOpError() << "model name " << shown(getSymName()) << " " << why;
  llvm::StringMap<Operation *> seen;
  llvm::StringSet<> params;
  for (Operation &op : getBlock()) {
    StringRef name, kind;
    if (auto in = dyn_cast<InputOp>(op)) {
      name = in.getName();
      kind = "input";
    } else if (auto p = dyn_cast<ParamOp>(op)) {
      name = p.getName();
      kind = "parameter";
      params.insert(name);
    } else if (auto buf = dyn_cast<BufferOp>(op)) {
      // Checkpointed beside the parameters, in the same file.
      name = buf.getName();
      kind = "buffer";
    } else if (auto out = dyn_cast<OutputOp>(op)) {
      for (Attribute a : out.getNames())
        if (auto n = dyn_cast<StringAttr>(a))
          if (std::string why = nameProblem(n.getValue()); !why.empty())
            return out.emitOpError()
                   << "output name " << shown(n.getValue()) << " " << why;
      continue;
    } else {
      continue;
    }
    if (name.empty())
      return op.emitOpError() << "has an empty " << kind << " name";
    if (std::string why = nameProblem(name); !why.empty())
      return op.emitOpError() << kind << " name " << shown(name) << " " << why;
    if (kind == "input" && name.find_first_of(",=") != StringRef::npos)
      return op.emitOpError()
             << "input name " << shown(name)
             << " holds ',' or '=': the training binary binds inputs with "
                "--data NAME=PATH,NAME=PATH";
    if (kind != "input" && name == "__metadata__")
      return op.emitOpError() << kind << " name \"__metadata__\" is the "
                                 "safetensors metadata key of checkpoints";
    auto [it, inserted] = seen.try_emplace(name, &op);
    if (!inserted) {
      InFlightDiagnostic diag = op.emitOpError()
                                << "duplicate " << kind << " name \"" << name
                                << "\"";
      diag.attachNote(it->second->getLoc()) << "first defined here";
      return diag;
    }
  }
  // Checkpoints hold NAME, NAME.exp_avg, NAME.exp_avg_sq (Adam) or
  // NAME.momentum_buffer (SGD) per parameter, in one file: no parameter may
  // be named as another's optimizer state.
  for (ParamOp p : getBlock().getOps<ParamOp>())
    for (StringRef suffix : {".exp_avg", ".exp_avg_sq", ".momentum_buffer"})
      if (p.getName().ends_with(suffix) &&
          params.contains(p.getName().drop_back(suffix.size())))
        return p.emitOpError()
               << "parameter name " << shown(p.getName())
               << " is the checkpoint name of parameter "
               << shown(p.getName().drop_back(suffix.size()))
               << "'s optimizer state";
  return success();
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  Attribute init = getInit();
  if (!isInitializerAttr(init))
    return emitOpError() << "init must be a #graph initializer (zeros, ones, "
                            "constant, normal, uniform, xavier_uniform, "
                            "xavier_normal, kaiming_uniform, kaiming_normal, "
                            "trunc_normal), got "
                         << init;
  bool needsFans = isa<XavierUniformInitAttr, XavierNormalInitAttr,
                       KaimingUniformInitAttr, KaimingNormalInitAttr>(init);
  auto type = cast<RankedTensorType>(getType());
  if (needsFans && type.getRank() < 2)
    return emitOpError() << "fan-based initializer needs a tensor of rank >= 2 "
                            "(PyTorch cannot compute fans below that), got rank "
                         << type.getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// OutputOp: `graph.output loss = %l : tensor<f32>, logits = %z : tensor<..>`
//===----------------------------------------------------------------------===//

Value OutputOp::getLoss() {
  for (auto [name, value] : llvm::zip(getNames(), getValues()))
    if (cast<StringAttr>(name).getValue() == "loss")
      return value;
  return nullptr;
}

ParseResult OutputOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<Attribute> names;
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<Type> types;
  std::string name;
  if (succeeded(parser.parseOptionalKeywordOrString(&name))) {
    while (true) {
      OpAsmParser::UnresolvedOperand operand;
      Type type;
      if (parser.parseEqual() || parser.parseOperand(operand) ||
          parser.parseColonType(type))
        return failure();
      names.push_back(parser.getBuilder().getStringAttr(name));
      operands.push_back(operand);
      types.push_back(type);
      if (failed(parser.parseOptionalComma()))
        break;
      if (parser.parseKeywordOrString(&name))
        return failure();
    }
  }
  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.resolveOperands(operands, types, parser.getCurrentLocation(),
                             result.operands))
    return failure();
  result.addAttribute("names", parser.getBuilder().getArrayAttr(names));
  return success();
}

void OutputOp::print(OpAsmPrinter &p) {
  llvm::interleaveComma(llvm::zip(getNames(), getValues()), p, [&](auto it) {
    auto [name, value] = it;
    p << ' ';
    p.printKeywordOrString(cast<StringAttr>(name).getValue());
    p << " = " << value << " : " << value.getType();
  });
  p.printOptionalAttrDict((*this)->getAttrs(), {"names"});
}

LogicalResult OutputOp::verify() {
  if (getNames().size() != getValues().size())
    return emitOpError() << "has " << getValues().size() << " values but "
                         << getNames().size() << " names";
  llvm::StringSet<> seen;
  for (Attribute name : getNames())
    if (!seen.insert(cast<StringAttr>(name).getValue()).second)
      return emitOpError() << "duplicate output name \""
                           << cast<StringAttr>(name).getValue() << "\"";
  Value loss = getLoss();
  if (!loss)
    return emitOpError() << "model has no loss: name one output `loss` "
                            "(graph.output loss = %l : tensor<f32>)";
  auto type = cast<RankedTensorType>(loss.getType());
  if (type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
    return emitOpError() << "the loss must be a scalar float tensor, got "
                         << type;
  return success();
}

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ConstantOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange,
    DictionaryAttr attrs, OpaqueProperties props, RegionRange,
    SmallVectorImpl<Type> &types) {
  Adaptor adaptor(ValueRange{}, attrs, props);
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type)
    return emitOptionalError(loc, "constant needs a ranked tensor value");
  types.push_back(type);
  return success();
}

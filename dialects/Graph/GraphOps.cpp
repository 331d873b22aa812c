//===- GraphOps.cpp - Structure ops, folders, custom syntax ---------------===//
//
// Shape inference and verifiers of the compute ops live in GraphShapes.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace ampc::graph;

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

LogicalResult ModelOp::verify() {
  llvm::StringMap<Operation *> seen;
  for (Operation &op : getBlock()) {
    StringRef name, kind;
    if (auto in = dyn_cast<InputOp>(op)) {
      name = in.getName();
      kind = "input";
    } else if (auto p = dyn_cast<ParamOp>(op)) {
      name = p.getName();
      kind = "parameter";
    } else {
      continue;
    }
    if (name.empty())
      return op.emitOpError() << "has an empty " << kind << " name";
    auto [it, inserted] = seen.try_emplace(name, &op);
    if (!inserted) {
      InFlightDiagnostic diag = op.emitOpError()
                                << "duplicate " << kind << " name \"" << name
                                << "\"";
      diag.attachNote(it->second->getLoc()) << "first defined here";
      return diag;
    }
  }
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

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.cpp.inc"

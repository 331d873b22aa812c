//===- CudaEmitBlock.cpp - Function bodies: kernels, library calls ---------===//
//
// One statement group per op, headed by the IR it comes from. Fused
// elementwise regions become one grid-stride __global__ kernel each (every
// inner op rounds to its result type, as on the CPU target); when every
// operand is read at the loop index and the count is a multiple of 4, each
// thread handles 4 consecutive elements (wider, aligned accesses). The
// shared walk is common/EmitBlock.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cuda/CudaEmitterImpl.h"
#include "compiler/targets/common/EmitBlock.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;
using namespace ampc::cuda_emit;

std::string ampc::cuda_emit::cudaElementType(Type type) {
  std::string t = cppElementType(type);
  if (t == "half")
    return "__half";
  if (t == "bf16")
    return "__nv_bfloat16";
  return t;
}

const TargetSyntax ampc::cuda_emit::kCudaSyntax = {
    /*name=*/"CUDA",
    /*target=*/"cuda",
    /*library=*/"ampc::cuda",
    /*elementType=*/cudaElementType,
    /*mathPrefix=*/"",
    /*mathSuffix=*/"f",
    /*scalarQualifiers=*/"__device__ __forceinline__",
    /*roundHelper=*/"rnd",
    /*fusedNoun=*/"kernel",
    // Dropout masks differ per data-parallel rank (setDataShard), drawn as
    // on the CPU target.
    /*dropoutExtraAttrs=*/", {\"shard\", shard_}",
};

namespace {

class CudaBlockEmitter : public BlockEmitter {
public:
  CudaBlockEmitter(BlockEnv &env, FileParts &parts, raw_indented_ostream &os)
      : BlockEmitter(cuda_emit::kCudaSyntax, env, os), parts(parts) {}

private:
  FileParts &parts;

  LogicalResult emitFused(kernel::FusedElementwiseOp op) override {
    auto shape = cast<RankedTensorType>(op.getResult(0).getType()).getShape();
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    std::string name = "fused_" + std::to_string(parts.nextKernel++);

    // Operands: pointers with their index expressions.
    SmallVector<std::string> params, args, index, inputs, results;
    bool flat = true;
    for (auto [k, in] : llvm::enumerate(op.getInputs())) {
      auto inShape = cast<RankedTensorType>(in.getType()).getShape();
      params.push_back("const " + cudaElementType(in.getType()) +
                       " *__restrict__ a" + std::to_string(k));
      args.push_back(env[in]);
      inputs.push_back("a" + std::to_string(k));
      index.push_back(broadcastIndex(inShape, shape));
      flat &= index.back() == "i";
    }
    for (auto [k, r] : llvm::enumerate(op.getResults())) {
      params.push_back(cudaElementType(r.getType()) + " *__restrict__ r" +
                       std::to_string(k));
      args.push_back(env[r]);
      results.push_back("r" + std::to_string(k));
    }
    // Four elements per thread when every access is at the loop index.
    bool vec4 = flat && count % 4 == 0;

    std::string k;
    llvm::raw_string_ostream ks(k);
    ks << "// " << name << ":";
    for (Operation &inner : op.getBody().front().without_terminator())
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
    {
      raw_indented_ostream body(ks);
      body.indent().indent();
      if (failed(emitFusedBody(op, inputs, index, results, body)))
        return failure();
    }
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

  LogicalResult emitConstant(graph::ConstantOp op) override {
    Value r = op.getResult();
    auto tensor = cast<RankedTensorType>(r.getType());
    std::string type = cudaElementType(tensor);
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
      os << "fill<<<grid(" << tensor.getNumElements() << "), 256, 0, stream_>>>("
         << env[r] << ", " << tensor.getNumElements() << ", " << type << "("
         << elementLiteral(dense.getSplatValue<Attribute>(), hostType) << "));\n";
      return success();
    }
    FileParts::Constant c;
    c.type = type == "__half" || type == "__nv_bfloat16" ? "float" : type;
    llvm::raw_string_ostream vs(c.values);
    vs << "{";
    llvm::interleaveComma(dense.getValues<Attribute>(), vs,
                          [&](Attribute a) { vs << elementLiteral(a, c.type); });
    vs << "}";
    c.bytes = byteSize(tensor);
    if (c.type != type)
      return op.emitError() << "the CUDA emitter supports non-splat constants "
                               "of f32 and integer types only";
    os << "check(cudaMemcpyAsync(" << env[r] << ", constants_["
       << parts.constants.size() << "], " << c.bytes
       << ", cudaMemcpyDeviceToDevice, stream_), \"constant\");\n";
    parts.constants.push_back(std::move(c));
    return success();
  }
};

} // namespace

LogicalResult ampc::cuda_emit::emitCudaBlock(Block &block, BlockEnv &env,
                                             FileParts &parts,
                                             raw_indented_ostream &os) {
  return CudaBlockEmitter(env, parts, os).emitBlock(block);
}

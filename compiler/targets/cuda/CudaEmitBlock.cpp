//===- CudaEmitBlock.cpp - Function bodies: kernels, library calls ---------===//
//
// One statement group per op, headed by the IR it comes from. Fused
// elementwise regions become one grid-stride __global__ kernel each (every
// inner op rounds to its result type, as on the CPU target). When every
// operand is read at the loop index ("flat"), each thread handles V
// consecutive elements, V = 16 bytes / the smallest element size among the
// operands and results, loaded and stored as aligned Packs (16-byte vector
// accesses; 2 x 16 bytes for the wider types), if the count is a multiple
// of V and every pointer is known to be aligned to its pack (see
// knownAlignment). Otherwise a flat region with a count that is a multiple
// of 4 takes 4 elements per thread with scalar accesses, and any other one
// element per thread. The per-element code is the same on every path. The
// shared walk is common/EmitBlock.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cuda/CudaEmitterImpl.h"
#include "compiler/targets/common/EmitBlock.h"
#include "dialects/Graph/GraphDialect.h"
#include "passes/ValueAliases.h"

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
    // step_at: the device copy of the step, which replayed graphs read.
    /*dropoutExtraAttrs=*/", {\"shard\", shard()}, {\"step_at\", "
                          "int64_t(reinterpret_cast<intptr_t>(dropoutStep()))}",
    // nvcc contracts a * b + c into an FMA by default (-fmad=true), across
    // the ops of a fused kernel too; the library kernels round each op.
    /*arithPrefix=*/"__f",
    /*arithSuffix=*/"_rn",
};

namespace {

// Stands for a fused kernel's name while its text is built; no C++ token
// contains '$'.
constexpr const char *kKernelNamePlaceholder = "$KERNEL$";

std::string replaceAll(std::string s, const std::string &from,
                       const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

class CudaBlockEmitter : public BlockEmitter {
public:
  CudaBlockEmitter(BlockEnv &env, FileParts &parts, raw_indented_ostream &os)
      : BlockEmitter(cuda_emit::kCudaSyntax, env, os), parts(parts) {}

private:
  FileParts &parts;

  // What the model's allocations guarantee (runtime/cuda/DeviceModel.cpp,
  // setup()): cudaMalloc returns 256-byte aligned memory, for the arena
  // (arena()), each model input (input(i)) and the FP32 parameter block, in
  // which every parameter starts at a multiple of 64 floats (weight(k)).
  // Each of those sites says that this code relies on it.
  static constexpr int64_t kBaseAlign = 256;

  // Bytes the device address bound to |v| is known to be a multiple of (a
  // power of two; 1 when nothing is known, e.g. the loss scale, which
  // points into the DeviceState).
  int64_t knownAlignment(Value v) {
    if (auto r = dyn_cast<OpResult>(v)) {
      Operation *def = r.getOwner();
      // Aliases, exactly as declareResults (common/EmitBlock.cpp) binds them.
      if (aliasesOperand(def, !env.training))
        return knownAlignment(def->getOperand(0));
      // graph.input -> input(k), graph.param -> weight(k) (bindModelValues).
      if (isa<graph::InputOp, graph::ParamOp>(def))
        return kBaseAlign;
      // arena + offset (kernel-plan-memory: multiples of 64 bytes; checked
      // here, not assumed).
      auto offsets =
          def->getAttrOfType<DenseI64ArrayAttr>(kernel::kOffsetsAttr);
      unsigned n = r.getResultNumber();
      if (!offsets || n >= offsets.size() || offsets[n] < 0)
        return 1;
      int64_t off = offsets[n];
      return off == 0 ? kBaseAlign : std::min(kBaseAlign, off & -off);
    }
    // Arguments of @grad: inputs -> input(k), parameters -> weight(k),
    // their half copies -> halfWeight(k) (bindGradArguments; DeviceModel
    // aligns each); the loss scale is not known to be aligned.
    auto arg = cast<BlockArgument>(v);
    auto fn = dyn_cast_or_null<func::FuncOp>(arg.getOwner()->getParentOp());
    if (fn && (fn.getArgAttr(arg.getArgNumber(), graph::kInputAttr) ||
               fn.getArgAttr(arg.getArgNumber(), graph::kParamAttr) ||
               fn.getArgAttr(arg.getArgNumber(), graph::kParamCopyAttr)))
      return kBaseAlign;
    return 1;
  }

  static int64_t elementBytes(Type type) {
    Type e = cast<RankedTensorType>(type).getElementType();
    return (e.getIntOrFloatBitWidth() + 7) / 8; // i1 -> bool, 1 byte
  }

  LogicalResult emitFused(kernel::FusedElementwiseOp op) override {
    auto shape = cast<RankedTensorType>(op.getResult(0).getType()).getShape();
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    // The kernel text is built around a placeholder name: identical texts
    // (the layers of a deep model) become one kernel below.
    const std::string name = kKernelNamePlaceholder;

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
    // V elements per thread as aligned packs (16-byte vector accesses) when
    // every access is at the loop index, the count is a multiple of V and
    // every pointer is aligned to its pack (V times its element size).
    SmallVector<Value> values(op.getInputs());
    values.append(op.getResults().begin(), op.getResults().end());
    int64_t minBytes = 16;
    for (Value v : values)
      minBytes = std::min(minBytes, elementBytes(v.getType()));
    int64_t vec = 16 / minBytes;
    bool packed = flat && 16 % minBytes == 0 && count % vec == 0;
    for (Value v : values)
      packed &= knownAlignment(v) % (vec * elementBytes(v.getType())) == 0;
    auto packType = [&](Value v) {
      return "Pack<" + cudaElementType(v.getType()) + ", " +
             std::to_string(vec) + ">";
    };
    // Otherwise four elements per thread when every access is at the loop
    // index (scalar accesses: the alignment is not known).
    bool vec4 = !packed && flat && count % 4 == 0;
    int64_t perThread = packed ? vec : vec4 ? 4 : 1;

    std::string k;
    llvm::raw_string_ostream ks(k);
    ks << "// " << name << ":";
    for (Operation &inner : op.getBody().front().without_terminator())
      ks << " " << inner.getName().getStringRef().drop_front(6);
    ks << "\n__global__ void __launch_bounds__(256) " << name << "(";
    llvm::interleaveComma(params, ks);
    ks << ") {\n";
    std::string loop = "int64_t(blockIdx.x) * blockDim.x + threadIdx.x; ";
    std::string step = "; q += int64_t(gridDim.x) * blockDim.x) {\n";
    SmallVector<std::string> packIns, packOuts;
    if (packed) {
      ks << "  // " << vec << " elements per thread in aligned packs (" << count
         << " % " << vec << " == 0, every pointer aligned to its pack).\n"
         << "  for (int64_t q = " << loop << "q < " << count / vec << step;
      for (auto [j, in] : llvm::enumerate(op.getInputs())) {
        std::string pt = packType(in), n = "in" + std::to_string(j);
        ks << "  const " << pt << " " << n << " = reinterpret_cast<const " << pt
           << " *>(" << inputs[j] << ")[q];\n";
        packIns.push_back(n + ".v");
      }
      for (auto [j, r] : llvm::enumerate(op.getResults())) {
        std::string n = "out" + std::to_string(j);
        ks << "  " << packType(r) << " " << n << ";\n";
        packOuts.push_back(n + ".v");
      }
      ks << "#pragma unroll\n"
         << "  for (int i = 0; i < " << vec << "; ++i) {\n";
    } else if (vec4) {
      ks << "  for (int64_t q = " << loop << "q < " << count / 4 << step
         << "#pragma unroll\n"
            "  for (int64_t i = 4 * q; i < 4 * q + 4; ++i) {\n";
    } else {
      ks << "  for (int64_t i = " << loop << "i < " << count
         << "; i += int64_t(gridDim.x) * blockDim.x) {\n  {\n";
    }
    {
      raw_indented_ostream body(ks);
      body.indent().indent();
      if (failed(packed ? emitFusedBody(op, packIns, index, packOuts, body)
                        : emitFusedBody(op, inputs, index, results, body)))
        return failure();
    }
    ks << "  }\n";
    for (auto [j, r] : llvm::enumerate(op.getResults()))
      if (packed)
        ks << "  reinterpret_cast<" << packType(r) << " *>(" << results[j]
           << ")[q] = out" << j << ";\n";
    ks << "  }\n}\n\n";
    // Emit each distinct kernel once and launch it by its first name: nvcc's
    // time grows with the kernel count (GPT-2 small: 492 fused regions, 25
    // distinct kernels).
    auto [it, fresh] = parts.kernelNames.try_emplace(k);
    if (fresh) {
      it->second = "fused_" + std::to_string(parts.nextKernel++);
      parts.kernels += replaceAll(k, name, it->second);
    }
    const std::string &kernel = it->second;
    parts.launched.push_back(kernel);

    os << "// ";
    llvm::interleaveComma(op.getResults(), os,
                          [&](Value v) { os << env.ssaName(v); });
    os << " = fused kernel " << kernel << "\n";
    os << kernel << "<<<grid(" << count / perThread << "), 256, 0, stream()>>>(";
    llvm::interleaveComma(args, os);
    // A failed launch (no kernel image for this GPU, say) named here rather
    // than by the next library call.
    os << ");\ncheck(cudaGetLastError(), \"" << kernel << "\");\n";
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
      os << "fill<<<grid(" << tensor.getNumElements() << "), 256, 0, stream()>>>("
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
    os << "check(cudaMemcpyAsync(" << env[r] << ", constant("
       << parts.constants.size() << "), " << c.bytes
       << ", cudaMemcpyDeviceToDevice, stream()), \"constant\");\n";
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

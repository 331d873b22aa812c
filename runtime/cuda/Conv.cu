//===- Conv.cu - conv2d (cuDNN or im2col + cuBLASLt) ----------------------===//
//
// conv2d and its backward ops run on cuDNN (runtime/cuda/Cudnn.h) when the
// build has it and cuDNN supports the configuration; AMPC_CUDA_CONV=im2col
// forces the im2col path below, which also takes everything cuDNN refuses.
// Both accumulate in FP32 and round each result once; a bias is added in
// FP32 before that rounding (f32: added to cuDNN's FP32 result; f16/bf16:
// the bias is written into y first and cuDNN blends it in with beta = 1).
//
// im2col: per channel group, the columns of every image [N, Cg*KH*KW,
// OH*OW] and one strided-batched GEMM with the group's weight. Backward
// input is a GEMM into FP32 columns and a gathering col2im (deterministic);
// backward weight accumulates the images' GEMMs in FP32 (beta = 1), rounded
// once.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/cuda/Cudnn.h"
#include "runtime/cuda/Gemm.h"

#include <vector>

namespace ampc::cuda {

using namespace detail;

namespace {

// The shared conv2d geometry (plain data, passed to kernels by value; checked
// by kernels::detail::convGeometry) with device-side accessors.
struct Geom : kernels::detail::ConvShape {
  __host__ __device__ int64_t rows() const { return cg * kh * kw; }
  __host__ __device__ int64_t cols() const { return oh * ow; }
};

// col[n][r][l] for channel group |grp|, in x's type.
__global__ void im2colKernel(Geom g, int64_t grp, const void *x, int tx,
                             void *col, int tc) {
  int64_t total = g.n * g.rows() * g.cols();
  AMPC_GRID_STRIDE(i, total) {
    int64_t l = i % g.cols(), r = (i / g.cols()) % g.rows(),
            n = i / (g.cols() * g.rows());
    int64_t c = r / (g.kh * g.kw), ki = (r / g.kw) % g.kh, kj = r % g.kw;
    int64_t oy = l / g.ow, ox = l % g.ow;
    int64_t iy = oy * g.sh - g.ph + ki * g.dh, ix = ox * g.sw - g.pw + kj * g.dw;
    float v = 0.0f;
    if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w)
      v = ld(x, tx, ((n * g.c + grp * g.cg + c) * g.h + iy) * g.w + ix);
    st(col, tc, i, v);
  }
}

// dx[n][grp*cg + c][iy][ix] = sum of the FP32 columns that read it, plus
// bias[grp*cg + c] when there is one (conv_transpose2d).
__global__ void col2imKernel(Geom g, int64_t grp, const float *col, void *dx,
                             int tdx, const void *bias, int tb) {
  int64_t total = g.n * g.cg * g.h * g.w;
  AMPC_GRID_STRIDE(i, total) {
    int64_t ix = i % g.w, iy = (i / g.w) % g.h, c = (i / (g.w * g.h)) % g.cg,
            n = i / (g.w * g.h * g.cg);
    float s = 0.0f;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      int64_t ty = iy + g.ph - ki * g.dh;
      if (ty < 0 || ty % g.sh)
        continue;
      int64_t oy = ty / g.sh;
      if (oy >= g.oh)
        continue;
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        int64_t tx = ix + g.pw - kj * g.dw;
        if (tx < 0 || tx % g.sw)
          continue;
        int64_t ox = tx / g.sw;
        if (ox >= g.ow)
          continue;
        int64_t r = (c * g.kh + ki) * g.kw + kj;
        s += col[(n * g.rows() + r) * g.cols() + oy * g.ow + ox];
      }
    }
    if (bias)
      s += ld(bias, tb, grp * g.cg + c);
    st(dx, tdx, ((n * g.c + grp * g.cg + c) * g.h + iy) * g.w + ix, s);
  }
}

// y = acc + bias[channel], rounded once (acc null: 0; acc may be y itself
// when y is f32).
__global__ void biasNarrow(const float *acc, const void *bias, int tb,
                           void *y, int ty, int64_t o, int64_t l,
                           int64_t total) {
  AMPC_GRID_STRIDE(i, total) {
    float v = acc ? acc[i] : 0.0f;
    if (bias)
      v += ld(bias, tb, (i / l) % o);
    st(y, ty, i, v);
  }
}

// conv2d on cuDNN; false when the call takes the im2col path. The bias is
// added in FP32 before the result's one rounding: f32 y is cuDNN's FP32
// result, the bias added in place; an f16/bf16 y first holds the bias
// (exact: only a bias of y's type qualifies) and cuDNN adds its FP32 result
// to it (beta = 1) before rounding.
bool conv2dCudnn(std::string_view op, const Geom &g, const TensorRef &x,
                 const TensorRef &w, const TensorRef *bias, const TensorRef &y,
                 cudaStream_t stream) {
  bool blend = bias && y.dtype != DType::F32;
  if (blend && bias->dtype != y.dtype)
    return false;
  ConvPlan *p = convPlan(ConvPass::Forward, g, x.dtype, w.dtype, y.dtype,
                         stream, op);
  if (!p)
    return false;
  if (blend)
    biasNarrow<<<gridFor(y.numel()), 256, 0, stream>>>(
        nullptr, bias->data, int(bias->dtype), y.data, int(y.dtype), g.o,
        g.cols(), y.numel());
  if (!convRun(*p, x.data, w.data, y.data, blend ? 1.0f : 0.0f, stream, op))
    return false; // y is rewritten whole by the im2col path
  if (bias && !blend)
    biasNarrow<<<gridFor(y.numel()), 256, 0, stream>>>(
        static_cast<const float *>(y.data), bias->data, int(bias->dtype),
        y.data, int(y.dtype), g.o, g.cols(), y.numel());
  checkLaunch(op.data());
  return true;
}

// Scratch for im2col columns (|esz| bytes per element) and an FP32
// accumulator of |accElems| after them, 256-byte aligned.
struct ColumnsAndAcc {
  void *col;
  float *acc;
};
ColumnsAndAcc columnsAndAccumulator(const Geom &g, size_t esz, int64_t accElems,
                                    std::string_view op, cudaStream_t stream) {
  size_t colBytes = (size_t(g.n * g.rows() * g.cols()) * esz + 255) & ~size_t(255);
  char *s = static_cast<char *>(
      scratch(colBytes + size_t(accElems) * sizeof(float), op, stream));
  return {s, reinterpret_cast<float *>(s + colBytes)};
}

} // namespace

void conv2dKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.conv2d";
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef *bias = optional(in, 2);
  const TensorRef &y = required(op, out, 0);
  Geom g{kernels::detail::convGeometry(op, x, w, y, attrs, bias)};
  if (conv2dCudnn(op, g, x, w, bias, y, stream))
    return;
  size_t esz = dtypeSize(x.dtype), wsz = dtypeSize(w.dtype);
  auto [col, acc] = columnsAndAccumulator(g, esz, y.numel(), op, stream);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    int64_t total = g.n * g.rows() * g.cols();
    im2colKernel<<<gridFor(total), 256, 0, stream>>>(g, grp, x.data,
                                                     int(x.dtype), col,
                                                     int(x.dtype));
    Gemm m;
    m.m = g.og, m.n = g.cols(), m.k = g.rows();
    // The group's weight rows: in w's element size (the columns are x's).
    m.a = static_cast<const char *>(w.data) + grp * g.og * g.rows() * wsz;
    m.aType = w.dtype, m.lda = g.rows(), m.strideA = 0;
    m.b = col, m.bType = x.dtype, m.ldb = g.cols(),
    m.strideB = g.rows() * g.cols();
    m.c = acc + grp * g.og * g.cols(), m.cType = DType::F32, m.ldc = g.cols(),
    m.strideC = g.o * g.cols();
    m.batch = g.n;
    gemm(m, stream, op);
  }
  biasNarrow<<<gridFor(y.numel()), 256, 0, stream>>>(
      acc, bias ? bias->data : nullptr, bias ? int(bias->dtype) : 0, y.data,
      int(y.dtype), g.o, g.cols(), y.numel());
  checkLaunch(op.data());
}

namespace {

// dx from g [N,O,OH,OW] and weight (conv2d_backward_input), plus an optional
// bias [C] added in FP32 before the one rounding (conv_transpose2d): on
// cuDNN as conv2dCudnn does it (f16/bf16 dx holds the bias first, beta = 1;
// f32 dx gets it added after), in col2im on the im2col path.
void backwardInput(std::string_view op, const TensorRef &gy,
                   const TensorRef &w, const TensorRef *bias,
                   const TensorRef &dx, const Attrs &attrs,
                   cudaStream_t stream) {
  Geom g{kernels::detail::convGeometry(op, dx, w, gy, attrs)};
  if (bias && bias->numel() != g.c)
    kernels::detail::fail(op, "bias must be [Cout]");
  bool blend = bias && dx.dtype != DType::F32;
  if (!blend || bias->dtype == dx.dtype)
    if (ConvPlan *p = convPlan(ConvPass::BackwardData, g, dx.dtype, w.dtype,
                               gy.dtype, stream, op)) {
      if (blend)
        biasNarrow<<<gridFor(dx.numel()), 256, 0, stream>>>(
            nullptr, bias->data, int(bias->dtype), dx.data, int(dx.dtype),
            g.c, g.h * g.w, dx.numel());
      if (convRun(*p, dx.data, w.data, gy.data, blend ? 1.0f : 0.0f, stream,
                  op)) {
        if (bias && !blend)
          biasNarrow<<<gridFor(dx.numel()), 256, 0, stream>>>(
              static_cast<const float *>(dx.data), bias->data,
              int(bias->dtype), dx.data, int(dx.dtype), g.c, g.h * g.w,
              dx.numel());
        checkLaunch(op.data());
        return;
      } // dx is rewritten whole by the im2col path
    }
  size_t esz = dtypeSize(w.dtype), gsz = dtypeSize(gy.dtype);
  auto *col = static_cast<float *>(scratch(
      size_t(g.n * g.rows() * g.cols()) * sizeof(float), op, stream));
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    Gemm m; // col[n] = W_g^T [rows, og] . g_n [og, L]
    m.transA = true;
    m.m = g.rows(), m.n = g.cols(), m.k = g.og;
    m.a = static_cast<const char *>(w.data) + grp * g.og * g.rows() * esz;
    m.aType = w.dtype, m.lda = g.rows(), m.strideA = 0;
    m.b = static_cast<const char *>(gy.data) + grp * g.og * g.cols() * gsz;
    m.bType = gy.dtype, m.ldb = g.cols(), m.strideB = g.o * g.cols();
    m.c = col, m.cType = DType::F32, m.ldc = g.cols(),
    m.strideC = g.rows() * g.cols();
    m.batch = g.n;
    gemm(m, stream, op);
    int64_t total = g.n * g.cg * g.h * g.w;
    col2imKernel<<<gridFor(total), 256, 0, stream>>>(
        g, grp, col, dx.data, int(dx.dtype), bias ? bias->data : nullptr,
        bias ? int(bias->dtype) : 0);
  }
  checkLaunch(op.data());
}

} // namespace

// in: g [N,O,OH,OW], weight; out: dx.
void conv2dBackwardInputKernel(std::span<const TensorRef> in,
                               std::span<const TensorRef> out,
                               const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.conv2d_backward_input";
  backwardInput(op, required(op, in, 0), required(op, in, 1), nullptr,
                required(op, out, 0), attrs, stream);
}

// conv_transpose2d(x, weight [Cin,Cout/g,KH,KW], bias?): conv2d's input
// cotangent with x as the cotangent; output_padding shows only in the shape.
void convTranspose2dKernel(std::span<const TensorRef> in,
                           std::span<const TensorRef> out, const Attrs &attrs,
                           cudaStream_t stream) {
  constexpr std::string_view op = "graph.conv_transpose2d";
  backwardInput(op, required(op, in, 0), required(op, in, 1), optional(in, 2),
                required(op, out, 0), attrs, stream);
}

// in: x, g; out: dw [O, Cg, KH, KW].
void conv2dBackwardWeightKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.conv2d_backward_weight";
  const TensorRef &x = required(op, in, 0), &gy = required(op, in, 1);
  const TensorRef &dw = required(op, out, 0);
  Geom g{kernels::detail::convGeometry(op, x, dw, gy, attrs)};
  if (ConvPlan *p = convPlan(ConvPass::BackwardFilter, g, x.dtype, dw.dtype,
                             gy.dtype, stream, op))
    if (convRun(*p, x.data, dw.data, gy.data, 0.0f, stream, op))
      return;
  size_t esz = dtypeSize(x.dtype), gsz = dtypeSize(gy.dtype);
  auto [col, acc] = columnsAndAccumulator(g, esz, dw.numel(), op, stream);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    int64_t total = g.n * g.rows() * g.cols();
    im2colKernel<<<gridFor(total), 256, 0, stream>>>(g, grp, x.data,
                                                     int(x.dtype), col,
                                                     int(x.dtype));
    for (int64_t n = 0; n < g.n; ++n) {
      Gemm m; // dW_g [og, rows] += g_n [og, L] . col_n^T [L, rows]
      m.transB = true;
      m.m = g.og, m.n = g.rows(), m.k = g.cols();
      m.a = static_cast<const char *>(gy.data) +
            (n * g.o + grp * g.og) * g.cols() * gsz;
      m.aType = gy.dtype, m.lda = g.cols();
      m.b = static_cast<const char *>(col) + n * g.rows() * g.cols() * esz;
      m.bType = x.dtype, m.ldb = g.cols();
      m.c = acc + grp * g.og * g.rows(), m.cType = DType::F32,
      m.ldc = g.rows();
      m.beta = n == 0 ? 0.0f : 1.0f;
      gemm(m, stream, op);
    }
  }
  biasNarrow<<<gridFor(dw.numel()), 256, 0, stream>>>(
      acc, nullptr, 0, dw.data, int(dw.dtype), 1, 1, dw.numel());
  checkLaunch(op.data());
}

} // namespace ampc::cuda

//===- ConvTranspose.cpp - conv_transpose2d (NCHW) ------------------------===//
//
// Written as a gather: each output element sums the input taps that reach it
// (the conv2d whose input cotangent this is, read backwards), then adds the
// bias, so one FP32 accumulator per element rounds as conv2d's does.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"

using namespace ampc::interp;

namespace {

KernelResult convTranspose2d(const OpContext &ctx,
                             std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  const Tensor &x = in[0], &wt = in[1];
  int64_t n = x.shape[0], cin = x.shape[1], h = x.shape[2], w = x.shape[3];
  int64_t opg = wt.shape[1], kh = wt.shape[2], kw = wt.shape[3];
  int64_t cout = out.shape[1], oh = out.shape[2], ow = out.shape[3];
  int64_t groups = ctx.getInt("groups", 1), cpg = cin / groups;
  auto s = ctx.getInts("stride", {1, 1});
  auto p = ctx.getInts("padding", {0, 0});
  auto d = ctx.getInts("dilation", {1, 1});
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t co = 0; co < cout; ++co) {
      int64_t grp = co / opg, oc = co % opg;
      for (int64_t a = 0; a < oh; ++a)
        for (int64_t b = 0; b < ow; ++b) {
          Accum acc(ctx);
          for (int64_t ci = grp * cpg; ci < (grp + 1) * cpg; ++ci)
            for (int64_t ki = 0; ki < kh; ++ki) {
              // Input row hi reaches output row hi * s - p + ki * d.
              int64_t ty = a + p[0] - ki * d[0];
              if (ty < 0 || ty % s[0] || ty / s[0] >= h)
                continue;
              for (int64_t kj = 0; kj < kw; ++kj) {
                int64_t tx = b + p[1] - kj * d[1];
                if (tx < 0 || tx % s[1] || tx / s[1] >= w)
                  continue;
                acc.add(x.f[((ni * cin + ci) * h + ty / s[0]) * w + tx / s[1]] *
                        wt.f[((ci * opg + oc) * kh + ki) * kw + kj]);
              }
            }
          if (in.size() > 2)
            acc.add(in[2].f[co]);
          out.f[((ni * cout + co) * oh + a) * ow + b] = acc.get();
        }
    }
  return one(std::move(out));
}

} // namespace

void ampc::interp::registerConvTransposeKernels(KernelTable &t) {
  t["graph.conv_transpose2d"] = convTranspose2d;
}

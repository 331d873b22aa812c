//===- BatchNorm.cpp - batch_norm, group_norm and their backward ----------===//
//
// batch_norm: the training form (batch statistics, biased variance), as the reference
// for @<model>_grad: the interpreter keeps no state, so it neither reads nor
// updates the running statistics. Statistics in double, each result rounded
// once to its type (like layer_norm); dweight/dbias accumulate as sums do.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"
#include "compiler/interp/kernels/NormStats.h"

#include <cmath>

using namespace ampc::interp;

namespace {

// x as [N, C, S]: S = H*W (1 for [N, C]).
struct Channels {
  int64_t n, c, s;
  int64_t at(int64_t b, int64_t ch, int64_t k) const {
    return (b * c + ch) * s + k;
  }
};

Channels channelsOf(const Tensor &x) {
  Channels g{x.shape[0], x.shape[1], 1};
  for (size_t k = 2; k < x.shape.size(); ++k)
    g.s *= x.shape[k];
  return g;
}

// Channel |ch| across the batch: N runs of S elements, C*S apart.
NormStats channelStats(const std::vector<double> &x, const Channels &g,
                       int64_t ch, double eps) {
  return normStats(x.data() + ch * g.s, g.n, g.s, g.c * g.s, eps);
}

// batch_norm(x, running_mean, running_var, weight, bias).
KernelResult batchNorm(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &x = in[0], &w = in[3], &bias = in[4];
  double eps = ctx.getFloat("eps", 1e-5);
  Tensor out = ctx.makeResult();
  Channels g = channelsOf(x);
  for (int64_t ch = 0; ch < g.c; ++ch) {
    NormStats st = channelStats(x.f, g, ch, eps);
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t k = 0; k < g.s; ++k) {
        int64_t i = g.at(b, ch, k);
        out.f[i] = (x.f[i] - st.mean) * st.rstd * w.f[ch] + bias.f[ch];
      }
  }
  return one(std::move(out));
}

// batch_norm_backward(x, weight, g) -> dx, dweight, dbias.
KernelResult batchNormBackward(const OpContext &ctx,
                               std::span<const Tensor> in) {
  const Tensor &x = in[0], &w = in[1], &gy = in[2];
  double eps = ctx.getFloat("eps", 1e-5);
  Tensor dx = ctx.makeResult(0), dw = ctx.makeResult(1),
         db = ctx.makeResult(2);
  Channels g = channelsOf(x);
  double n = double(g.n * g.s);
  for (int64_t ch = 0; ch < g.c; ++ch) {
    NormStats st = channelStats(x.f, g, ch, eps);
    double sg = 0, sgx = 0, dwAcc = 0, dbAcc = 0;
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t k = 0; k < g.s; ++k) {
        int64_t i = g.at(b, ch, k);
        double xhat = (x.f[i] - st.mean) * st.rstd;
        sg += gy.f[i];
        sgx += gy.f[i] * xhat;
        accumulate(ctx, dwAcc, gy.f[i] * xhat);
        accumulate(ctx, dbAcc, gy.f[i]);
      }
    double mg = sg * w.f[ch] / n, mgx = sgx * w.f[ch] / n;
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t k = 0; k < g.s; ++k) {
        int64_t i = g.at(b, ch, k);
        double xhat = (x.f[i] - st.mean) * st.rstd;
        dx.f[i] = st.rstd * (gy.f[i] * w.f[ch] - mg - xhat * mgx);
      }
    dw.f[ch] = dwAcc;
    db.f[ch] = dbAcc;
  }
  return several(std::move(dx), std::move(dw), std::move(db));
}

// group_norm's runs: sample n, group grp is the contiguous run of
// perGroup * spatial elements at (n * groups + grp) * len.
struct Groups {
  int64_t runs, groups, perGroup, spatial;
  int64_t len() const { return perGroup * spatial; }
  int64_t channel(int64_t run, int64_t j) const {
    return (run % groups) * perGroup + j / spatial;
  }
};

Groups groupsOf(const OpContext &ctx, const Tensor &x) {
  int64_t groups = ctx.getInt("num_groups", 1);
  Groups g{x.shape[0] * groups, groups, x.shape[1] / groups, 1};
  for (size_t k = 2; k < x.shape.size(); ++k)
    g.spatial *= x.shape[k];
  return g;
}

// group_norm(x, weight, bias).
KernelResult groupNorm(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &x = in[0], &w = in[1], &bias = in[2];
  double eps = ctx.getFloat("eps", 1e-5);
  Tensor out = ctx.makeResult();
  Groups g = groupsOf(ctx, x);
  for (int64_t r = 0; r < g.runs; ++r) {
    const double *p = x.f.data() + r * g.len();
    NormStats st = normStats(p, 1, g.len(), g.len(), eps);
    for (int64_t j = 0; j < g.len(); ++j) {
      int64_t c = g.channel(r, j);
      out.f[r * g.len() + j] = (p[j] - st.mean) * st.rstd * w.f[c] + bias.f[c];
    }
  }
  return one(std::move(out));
}

// group_norm_backward(x, weight, g) -> dx, dweight, dbias.
KernelResult groupNormBackward(const OpContext &ctx,
                               std::span<const Tensor> in) {
  const Tensor &x = in[0], &w = in[1], &gy = in[2];
  double eps = ctx.getFloat("eps", 1e-5);
  Tensor dx = ctx.makeResult(0), dw = ctx.makeResult(1),
         db = ctx.makeResult(2);
  Groups g = groupsOf(ctx, x);
  int64_t len = g.len();
  std::vector<double> dwAcc(w.f.size(), 0.0), dbAcc(w.f.size(), 0.0);
  for (int64_t r = 0; r < g.runs; ++r) {
    const double *p = x.f.data() + r * len, *pg = gy.f.data() + r * len;
    NormStats st = normStats(p, 1, len, len, eps);
    double sgw = 0, sgwx = 0;
    for (int64_t j = 0; j < len; ++j) {
      int64_t c = g.channel(r, j);
      double xhat = (p[j] - st.mean) * st.rstd, gw = pg[j] * w.f[c];
      sgw += gw;
      sgwx += gw * xhat;
      accumulate(ctx, dwAcc[c], pg[j] * xhat);
      accumulate(ctx, dbAcc[c], pg[j]);
    }
    double mgw = sgw / double(len), mgwx = sgwx / double(len);
    for (int64_t j = 0; j < len; ++j) {
      int64_t c = g.channel(r, j);
      double xhat = (p[j] - st.mean) * st.rstd;
      dx.f[r * len + j] = st.rstd * (pg[j] * w.f[c] - mgw - xhat * mgwx);
    }
  }
  dw.f = dwAcc;
  db.f = dbAcc;
  return several(std::move(dx), std::move(dw), std::move(db));
}

} // namespace

void ampc::interp::registerBatchNormKernels(KernelTable &t) {
  t["graph.batch_norm"] = batchNorm;
  t["graph.batch_norm_backward"] = batchNormBackward;
  t["graph.group_norm"] = groupNorm;
  t["graph.group_norm_backward"] = groupNormBackward;
}

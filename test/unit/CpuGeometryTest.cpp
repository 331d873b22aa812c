//===- CpuGeometryTest.cpp - Shared host-side op geometry -----------------===//
//
// runtime/kernels/Geometry.h is used by both the CPU and the CUDA kernel
// libraries: its attribute defaults and error texts are the contract.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Geometry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampc::kernels::detail {
namespace {

// Shape-only refs: geometry never reads data.
TensorRef shaped(std::vector<int64_t> shape) {
  static char dummy;
  return makeRef(&dummy, DType::F32, shape);
}

std::string errorOf(auto &&f) {
  try {
    f();
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "no error";
}

TEST(CpuGeometry, RequiredAndOptional) {
  TensorRef a = shaped({2});
  TensorRef none = makeRef(nullptr, DType::F32, std::vector<int64_t>{2});
  std::vector<TensorRef> refs{a, none};
  EXPECT_EQ(&required("op", refs, 0), &refs[0]);
  EXPECT_EQ(optional(refs, 1), nullptr);
  EXPECT_EQ(optional(refs, 2), nullptr);
  EXPECT_EQ(errorOf([&] { required("graph.x", refs, 1); }),
            "graph.x: missing operand or result #1");
}

TEST(CpuGeometry, ConvDefaultsAndGroups) {
  TensorRef x = shaped({2, 4, 5, 6}), w = shaped({6, 2, 3, 3}),
            y = shaped({2, 6, 3, 4});
  ConvShape g = convShape("graph.conv2d", x, w, y, Attrs{{"groups", 2}});
  EXPECT_EQ(g.sh, 1);
  EXPECT_EQ(g.sw, 1);
  EXPECT_EQ(g.ph, 0);
  EXPECT_EQ(g.dw, 1);
  EXPECT_EQ(g.cg, 2);
  EXPECT_EQ(g.og, 3);
  EXPECT_EQ(g.oh, 3);
  EXPECT_EQ(g.ow, 4);
  EXPECT_EQ(errorOf([&] {
              convShape("graph.conv2d", x, w, y, Attrs{{"groups", 3}});
            }),
            "graph.conv2d: groups must divide the channel counts");
  EXPECT_EQ(errorOf([&] {
              convShape("graph.conv2d", x, w, y,
                        Attrs{{"groups", 2}, {"stride", {1, 1, 1}}});
            }),
            "graph.conv2d: stride must have two entries");
}

TEST(CpuGeometry, PoolStrideDefaultsToKernel) {
  TensorRef x = shaped({1, 3, 4, 4}), y = shaped({1, 3, 2, 2});
  PoolWindow k =
      poolWindow("graph.max_pool2d", x, y, Attrs{{"kernel_size", {2, 3}}});
  EXPECT_EQ(k.kh, 2);
  EXPECT_EQ(k.kw, 3);
  EXPECT_EQ(k.sh, 2);
  EXPECT_EQ(k.sw, 3);
  EXPECT_EQ(k.ph, 0);
  EXPECT_EQ(k.pw, 0);
  TensorRef bad = shaped({1, 2, 2, 2});
  EXPECT_EQ(errorOf([&] {
              poolWindow("graph.max_pool2d", x, bad,
                         Attrs{{"kernel_size", {2, 2}}});
            }),
            "graph.max_pool2d: expected [N,C,H,W] -> [N,C,OH,OW]");
}

TEST(CpuGeometry, AttentionScaleDefault) {
  TensorRef q = shaped({2, 3, 5, 4}), k = shaped({2, 3, 7, 4}),
            v = shaped({2, 3, 7, 8});
  AttnGeom g = attentionGeometry("graph.sdpa", q, k, v, Attrs{});
  EXPECT_EQ(g.batch, 6);
  EXPECT_EQ(g.t, 5);
  EXPECT_EQ(g.s, 7);
  EXPECT_EQ(g.d, 4);
  EXPECT_EQ(g.e, 8);
  EXPECT_EQ(g.scale, 0.5f);
  EXPECT_FALSE(g.causal);
  EXPECT_TRUE(attentionGeometry("graph.sdpa", q, k, v,
                                Attrs{{"causal", true}, {"scale", 0.25}})
                  .causal);
  EXPECT_EQ(errorOf([&] { attentionGeometry("graph.sdpa", q, v, v, Attrs{}); }),
            "graph.sdpa: expected q [.., T, D], k [.., S, D], v [.., S, E]");
}

TEST(CpuGeometry, MatmulShapes) {
  MatmulShape s =
      matmulShape("graph.matmul", shaped({2, 3}), shaped({3, 4}), shaped({2, 4}));
  EXPECT_EQ(s.batch, 1);
  EXPECT_EQ(s.m, 2);
  EXPECT_EQ(s.k, 3);
  EXPECT_EQ(s.n, 4);
  MatmulShape b = batchMatmulShape("graph.batch_matmul", shaped({5, 2, 3}),
                                   shaped({5, 3, 4}), shaped({5, 2, 4}));
  EXPECT_EQ(b.batch, 5);
  EXPECT_EQ(errorOf([&] {
              batchMatmulShape("graph.batch_matmul", shaped({5, 2, 3}),
                               shaped({4, 3, 4}), shaped({5, 2, 4}));
            }),
            "graph.batch_matmul: batch dimensions differ");
  TensorRef bias = shaped({4});
  MatmulShape l = linearShape("graph.linear", shaped({2, 5, 3}),
                              shaped({4, 3}), &bias, shaped({2, 5, 4}));
  EXPECT_EQ(l.m, 10);
  EXPECT_EQ(l.k, 3);
  EXPECT_EQ(l.n, 4);
  TensorRef badBias = shaped({3});
  EXPECT_EQ(errorOf([&] {
              linearShape("graph.linear", shaped({2, 3}), shaped({4, 3}),
                          &badBias, shaped({2, 4}));
            }),
            "graph.linear: result or bias shape mismatch");
}

TEST(CpuGeometry, LastDimRows) {
  TensorRef x = shaped({2, 3, 4}), w = shaped({4}), b = shaped({3});
  int64_t d = 0;
  EXPECT_EQ(lastDimRows("graph.layer_norm", x, d, {&w, nullptr}), 6);
  EXPECT_EQ(d, 4);
  EXPECT_EQ(errorOf([&] { lastDimRows("graph.layer_norm", x, d, {&w, &b}); }),
            "graph.layer_norm: weight/bias must be [D]");
  // The norms' result: x's size, or the kernel would write past it.
  TensorRef y = shaped({2, 3, 4}), small = shaped({2, 3, 3});
  EXPECT_EQ(normRows("graph.layer_norm", x, y, d, {&w}), 6);
  EXPECT_EQ(errorOf([&] { normRows("graph.rms_norm", x, small, d, {&w}); }),
            "graph.rms_norm: the result needs x's size");
}

// A transpose's perm names each axis once: [0, 0] on a square matrix
// matches the shapes but would read past the input.
TEST(CpuGeometry, TransposePermIsAPermutation) {
  TensorRef x = shaped({2, 2}), y = shaped({2, 2});
  Attrs swap{{"perm", {1, 0}}}, twice{{"perm", {0, 0}}};
  EXPECT_EQ(transposeCopy("graph.transpose", x, y, swap).src[0], 1);
  EXPECT_EQ(errorOf([&] { transposeCopy("graph.transpose", x, y, twice); }),
            "graph.transpose: perm is not a permutation");
}

} // namespace
} // namespace ampc::kernels::detail

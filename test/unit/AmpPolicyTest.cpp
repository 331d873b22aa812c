//===- AmpPolicyTest.cpp - The AMP policy model and its file parser --------===//
#include "passes/amp/Policy.h"

#include <gtest/gtest.h>

using namespace ampc::amp;

namespace {

std::optional<Policy> parse(llvm::StringRef text, std::string &error,
                            unsigned &line, unsigned &col) {
  return Policy::parse(text, error, line, col);
}

TEST(AmpPolicy, DefaultsMirrorPyTorch) {
  Policy p = Policy::defaults();
  EXPECT_EQ(p.lookup("graph.linear")->category, Category::Lower);
  EXPECT_EQ(p.lookup("linear")->group, "gemm");
  EXPECT_EQ(p.lookup("scaled_dot_product_attention")->category, Category::Lower);
  EXPECT_EQ(p.lookup("layer_norm")->category, Category::FP32);
  EXPECT_EQ(p.lookup("rsqrt")->category, Category::FP32);
  EXPECT_EQ(p.lookup("cross_entropy")->group, "loss");
  EXPECT_EQ(p.lookup("add")->category, Category::Promote);
  EXPECT_EQ(p.lookup("relu")->category, Category::Follow);
  EXPECT_EQ(p.lookup("sqrt")->category, Category::Follow);
  EXPECT_EQ(p.lookup("cast"), nullptr);
}

TEST(AmpPolicy, MovesPinsAndComments) {
  std::string error;
  unsigned line = 0, col = 0;
  auto p = parse("# comment\n\nbase: default\nfp32: gelu  # why\n"
                 "lower: graph.add\npin half: ln1 m.mlir:12 a/m.mlir:3:7\n",
                 error, line, col);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->lookup("gelu")->category, Category::FP32);
  EXPECT_EQ(p->lookup("gelu")->policyLine, 4u);
  EXPECT_EQ(p->lookup("add")->category, Category::Lower);
  EXPECT_EQ(p->lookup("matmul")->policyLine, 0u);
  ASSERT_EQ(p->pins().size(), 3u);
  EXPECT_TRUE(p->pins()[0].matchesName("ln1"));
  EXPECT_TRUE(p->pins()[1].matchesLoc("/x/m.mlir", 12, 5));
  EXPECT_FALSE(p->pins()[1].matchesLoc("/x/am.mlir", 12, 5));
  EXPECT_FALSE(p->pins()[1].matchesLoc("m.mlir", 13, 5));
  EXPECT_TRUE(p->pins()[2].matchesLoc("a/m.mlir", 3, 7));
  EXPECT_FALSE(p->pins()[2].matchesLoc("a/m.mlir", 3, 8));
  EXPECT_EQ(p->pins()[2].precision, PinPrecision::Half);
}

TEST(AmpPolicy, EmptyBaseDropsDefaults) {
  std::string error;
  unsigned line = 0, col = 0;
  auto p = parse("base: empty\nlower: matmul\n", error, line, col);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->lookup("matmul")->category, Category::Lower);
  EXPECT_EQ(p->lookup("softmax"), nullptr);
}

TEST(AmpPolicy, ErrorsAreLocated) {
  struct Case {
    const char *text;
    unsigned line, col;
    const char *message;
  } cases[] = {
      {"fp32: softmax\nfollow: relu softmx\n", 2, 14,
       "unknown op 'softmx' in the policy"},
      {"fp32: softmax\nbase: empty\n", 2, 1,
       "'base:' must come before every other line"},
      {"lowr: matmul\n", 1, 1,
       "unknown policy keyword 'lowr' (expected base, lower, fp32, promote, "
       "follow or pin)"},
      {"pin fp8: x\n", 1, 5,
       "unknown pin precision 'fp8' (expected fp32, fp16, bf16 or half)"},
      {"  matmul\n", 1, 3,
       "expected 'CATEGORY: op...', 'pin PRECISION: target...' or "
       "'base: default|empty'"},
  };
  for (const Case &c : cases) {
    std::string error;
    unsigned line = 0, col = 0;
    EXPECT_FALSE(parse(c.text, error, line, col)) << c.text;
    EXPECT_EQ(error, c.message) << c.text;
    EXPECT_EQ(line, c.line) << c.text;
    EXPECT_EQ(col, c.col) << c.text;
  }
}

} // namespace

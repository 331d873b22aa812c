//===- CpuRegistryTest.cpp - op lookup covers the dialect; attributes -----===//
#include "runtime/cpu/Kernels.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace ampc::cpu {
namespace {

std::string readFile(const char *path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Mnemonics of `def X : Graph_*<"mnemonic"...>` in a .td file.
std::set<std::string> tdMnemonics(const std::string &text) {
  std::set<std::string> names;
  std::regex def(R"(def\s+\w+\s*:\s*Graph_\w+\s*<\s*"(\w+)\")");
  for (std::sregex_iterator it(text.begin(), text.end(), def), end; it != end; ++it)
    names.insert((*it)[1]);
  return names;
}

TEST(CpuRegistry, CoversEveryGraphOpAndBackwardOp) {
  std::string td = readFile(AMPC_GRAPH_OPS_TD);
  ASSERT_FALSE(td.empty()) << AMPC_GRAPH_OPS_TD;
  std::set<std::string> want = tdMnemonics(td);
  ASSERT_GT(want.size(), 30u) << "the .td regex found too few ops";
  for (const char *structural : {"model", "input", "param", "output", "constant", "buffer"})
    ASSERT_EQ(want.erase(structural), 1u) << structural;
  if (std::filesystem::exists(AMPC_GRAPH_GRAD_OPS_TD))
    for (const std::string &n : tdMnemonics(readFile(AMPC_GRAPH_GRAD_OPS_TD)))
      want.insert(n);
  // The backward-op table of docs/ARCHITECTURE.md: rows "| `graph.x` |".
  std::string md = readFile(AMPC_ARCHITECTURE_MD);
  size_t section = md.find("## Backward ops");
  ASSERT_NE(section, std::string::npos);
  std::string table = md.substr(section);
  std::regex row(R"(\n\|\s*`graph\.(\w+)`)");
  size_t backward = 0;
  for (std::sregex_iterator it(table.begin(), table.end(), row), end; it != end; ++it, ++backward)
    want.insert((*it)[1]);
  ASSERT_GE(backward, 14u);
  for (const std::string &n : want)
    EXPECT_NE(lookup("graph." + n), nullptr) << "no kernel for graph." << n;
  // And nothing registered that the dialect does not have.
  std::set<std::string> registered;
  // The kernel dialect's row kernels (dialects/Kernel/KernelOps.td).
  const std::set<std::string_view> kernelOps = {
      "kernel.add_layer_norm", "kernel.layer_norm_backward_add",
      "kernel.add_rms_norm", "kernel.rms_norm_backward_add"};
  for (std::string_view n : registeredOps()) {
    EXPECT_TRUE(registered.insert(std::string(n)).second) << "duplicate " << n;
    if (kernelOps.count(n))
      continue;
    EXPECT_TRUE(want.count(std::string(n.substr(6)))) << "unknown op " << n;
  }
}

TEST(CpuRegistry, LookupByNameWithOrWithoutPrefix) {
  EXPECT_NE(lookup("graph.linear"), nullptr);
  EXPECT_EQ(lookup("linear"), lookup("graph.linear"));
  EXPECT_NE(lookup("graph.add"), lookup("graph.sub"));
  EXPECT_EQ(lookup("graph.nope"), nullptr);
  EXPECT_EQ(lookup("graph.constant"), nullptr);
  EXPECT_EQ(lookup(""), nullptr);
}

TEST(CpuRegistry, AttrsDefaultsAndKinds) {
  Attrs a{{"axis", int64_t(-1)}, {"eps", 1e-5}, {"perm", std::vector<int64_t>{1, 0}},
          {"stride", {2, 2}}, {"approximate", "tanh"}, {"keepdim", true}, {"groups", 2}};
  EXPECT_EQ(a.getInt("axis"), -1);
  EXPECT_EQ(a.getInt("groups", 1), 2);
  EXPECT_EQ(a.getInt("missing", 7), 7);
  EXPECT_EQ(a.getFloat("eps"), 1e-5);
  EXPECT_EQ(a.getFloat("axis"), -1.0); // ints read as floats
  EXPECT_EQ(a.getInts("perm"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(a.getInts("stride"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.getInts("padding", {0, 0}), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(a.getString("approximate", "none"), "tanh");
  EXPECT_TRUE(a.getBool("keepdim"));
  EXPECT_FALSE(a.getBool("causal"));
  a.set("causal", true).set("keepdim", false);
  EXPECT_TRUE(a.getBool("causal"));
  EXPECT_FALSE(a.getBool("keepdim"));
  EXPECT_THROW(a.getInt("absent"), std::invalid_argument);
  EXPECT_THROW(a.getInts("eps"), std::invalid_argument);
  EXPECT_THROW(a.getString("axis", ""), std::invalid_argument);
}

TEST(CpuRegistry, TensorRefHelpers) {
  float buf[6];
  TensorRef t = makeRef(buf, DType::F32, {2, 3});
  EXPECT_EQ(t.rank, 2);
  EXPECT_EQ(t.numel(), 6);
  TensorRef agg{buf, DType::F16, 1, {6}};
  EXPECT_EQ(agg.numel(), 6);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ((TensorRef{buf, DType::F32, 0, {}}).numel(), 1);
}

} // namespace
} // namespace ampc::cpu

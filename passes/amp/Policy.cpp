//===- Policy.cpp - Default AMP lists and the policy file parser ----------===//
#include "passes/amp/Policy.h"

#include "mlir/IR/Types.h"
#include "llvm/Support/raw_ostream.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace llvm;
using namespace ampc::amp;

namespace {
struct DefaultEntry {
  StringLiteral op;
  Category category;
  StringLiteral group;
};

// PyTorch's CUDA autocast lists (aten/src/ATen/autocast_mode.h:
// AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32, AT_FORALL_FP32_SET_OPT_DTYPE,
// AT_FORALL_PROMOTE), restricted to the graph dialect. Ops on no PyTorch list
// run in their input's type (follow): sqrt, neg, gelu, silu, leaky_relu,
// elu, sigmoid, tanh, abs, clamp, masked_fill, erf, sin, cos, reduce_max and
// reduce_mean (mean has no autocast entry, unlike sum). Binary ops and where
// have no entry either; PyTorch's type promotion runs them in the widest
// input type (promote). exp, log, pow, rsqrt, reciprocal and softplus are on
// PyTorch's fp32 list, as are nll_loss, binary_cross_entropy_with_logits
// and cumsum; argmax and gather have no entry (they follow their input).
constexpr DefaultEntry kDefaults[] = {
    {"matmul", Category::Lower, "gemm"},
    {"batch_matmul", Category::Lower, "gemm"},
    {"linear", Category::Lower, "gemm"},
    {"conv2d", Category::Lower, "conv"},
    {"conv_transpose2d", Category::Lower, "conv"},
    {"scaled_dot_product_attention", Category::Lower, "attention"},
    {"softmax", Category::FP32, "softmax"},
    {"log_softmax", Category::FP32, "softmax"},
    {"layer_norm", Category::FP32, "normalization"},
    {"rms_norm", Category::FP32, "normalization"},
    {"batch_norm", Category::FP32, "normalization"},
    {"group_norm", Category::FP32, "normalization"},
    {"exp", Category::FP32, "pointwise math"},
    {"log", Category::FP32, "pointwise math"},
    {"pow", Category::FP32, "pointwise math"},
    {"rsqrt", Category::FP32, "pointwise math"},
    {"reciprocal", Category::FP32, "pointwise math"},
    {"softplus", Category::FP32, "pointwise math"},
    {"cross_entropy", Category::FP32, "loss"},
    {"mse_loss", Category::FP32, "loss"},
    {"l1_loss", Category::FP32, "loss"},
    {"smooth_l1_loss", Category::FP32, "loss"},
    {"huber_loss", Category::FP32, "loss"},
    {"nll_loss", Category::FP32, "loss"},
    {"binary_cross_entropy_with_logits", Category::FP32, "loss"},
    {"reduce_sum", Category::FP32, "reduction"},
    {"cumsum", Category::FP32, "reduction"},
    {"add", Category::Promote, "binary"},
    {"sub", Category::Promote, "binary"},
    {"mul", Category::Promote, "binary"},
    {"div", Category::Promote, "binary"},
    {"maximum", Category::Promote, "binary"},
    {"minimum", Category::Promote, "binary"},
    {"where", Category::Promote, "binary"},
    {"concat", Category::Promote, "concat"},
    {"relu", Category::Follow, "activation"},
    {"gelu", Category::Follow, "activation"},
    {"tanh", Category::Follow, "activation"},
    {"sigmoid", Category::Follow, "activation"},
    {"silu", Category::Follow, "activation"},
    {"leaky_relu", Category::Follow, "activation"},
    {"elu", Category::Follow, "activation"},
    {"abs", Category::Follow, "pointwise"},
    {"clamp", Category::Follow, "pointwise"},
    {"masked_fill", Category::Follow, "pointwise"},
    {"erf", Category::Follow, "pointwise"},
    {"sin", Category::Follow, "pointwise"},
    {"cos", Category::Follow, "pointwise"},
    {"neg", Category::Follow, "pointwise"},
    {"sqrt", Category::Follow, "pointwise"},
    {"dropout", Category::Follow, "pointwise"},
    {"reshape", Category::Follow, "shape"},
    {"transpose", Category::Follow, "shape"},
    {"slice", Category::Follow, "shape"},
    {"max_pool2d", Category::Follow, "pooling"},
    {"avg_pool2d", Category::Follow, "pooling"},
    {"embedding", Category::Follow, "indexing"},
    {"reduce_max", Category::Follow, "reduction"},
    {"reduce_mean", Category::Follow, "reduction"},
    {"argmax", Category::Follow, "indexing"},
    {"gather", Category::Follow, "indexing"},
    {"adaptive_avg_pool2d", Category::Follow, "pooling"},
    {"upsample_nearest2d", Category::FP32, "upsample"},
    {"upsample_bilinear2d", Category::FP32, "upsample"},
    {"packed_attention", Category::Lower, "attention"},
};

// A whitespace-separated word of a line and its 1-based column.
struct Word {
  StringRef text;
  unsigned col;
};

SmallVector<Word> splitWords(StringRef line) {
  SmallVector<Word> words;
  size_t i = 0;
  while (i < line.size()) {
    if (isSpace(line[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < line.size() && !isSpace(line[i]))
      ++i;
    words.push_back({line.slice(start, i), unsigned(start + 1)});
  }
  return words;
}

std::optional<Category> parseCategory(StringRef s) {
  return StringSwitch<std::optional<Category>>(s)
      .Case("lower", Category::Lower)
      .Case("fp32", Category::FP32)
      .Case("promote", Category::Promote)
      .Case("follow", Category::Follow)
      .Default(std::nullopt);
}

bool isKnownOp(StringRef op) {
  return llvm::is_contained(Policy::knownOps(), shortOpName(op));
}
} // namespace

StringRef ampc::amp::shortOpName(StringRef opName) {
  opName.consume_front("graph.");
  return opName;
}

StringRef ampc::amp::categoryKeyword(Category c) {
  switch (c) {
  case Category::Lower:
    return "lower";
  case Category::FP32:
    return "fp32";
  case Category::Promote:
    return "promote";
  case Category::Follow:
    return "follow";
  }
  llvm_unreachable("category");
}

std::optional<PinPrecision> ampc::amp::parsePinPrecision(StringRef s) {
  return StringSwitch<std::optional<PinPrecision>>(s)
      .Case("fp32", PinPrecision::FP32)
      .Case("fp16", PinPrecision::FP16)
      .Case("bf16", PinPrecision::BF16)
      .Case("half", PinPrecision::Half)
      .Default(std::nullopt);
}

StringRef ampc::amp::pinPrecisionName(PinPrecision p) {
  switch (p) {
  case PinPrecision::FP32:
    return "fp32";
  case PinPrecision::FP16:
    return "fp16";
  case PinPrecision::BF16:
    return "bf16";
  case PinPrecision::Half:
    return "half";
  }
  llvm_unreachable("precision");
}

bool Pin::matchesLoc(StringRef f, unsigned l, unsigned c) const {
  if (file.empty() || l != line || (col && c != col))
    return false;
  // FILE matches the whole path or a suffix starting at a '/'.
  if (f == file)
    return true;
  return f.ends_with(file) && f[f.size() - file.size() - 1] == '/';
}

ArrayRef<StringRef> Policy::knownOps() {
  static const std::vector<StringRef> names = [] {
    std::vector<StringRef> v;
    for (const DefaultEntry &e : kDefaults)
      v.push_back(e.op);
    return v;
  }();
  return names;
}

Policy Policy::defaults() {
  Policy p;
  for (const DefaultEntry &e : kDefaults)
    p.set(e.op, OpRule{e.category, e.group.str(), 0});
  return p;
}

void Policy::set(StringRef op, OpRule rule) {
  rules[shortOpName(op)] = std::move(rule);
}

const OpRule *Policy::lookup(StringRef opName) const {
  auto it = rules.find(shortOpName(opName));
  return it == rules.end() ? nullptr : &it->second;
}

std::optional<Policy> Policy::parse(StringRef text, std::string &error,
                                    unsigned &errLine, unsigned &errCol) {
  Policy policy = defaults();
  bool sawDirective = false;
  auto fail = [&](unsigned line, unsigned col, const Twine &msg) {
    error = msg.str();
    errLine = line;
    errCol = col;
    return std::nullopt;
  };

  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (auto [index, rawLine] : llvm::enumerate(lines)) {
    unsigned lineNo = index + 1;
    StringRef line = rawLine.split('#').first.rtrim();
    SmallVector<Word> words = splitWords(line);
    if (words.empty())
      continue;
    // The head is everything up to the ':' ("base", "fp32", "pin half").
    size_t colon = line.find(':');
    if (colon == StringRef::npos)
      return fail(lineNo, words[0].col,
                  "expected 'CATEGORY: op...', 'pin PRECISION: target...' or "
                  "'base: default|empty'");
    SmallVector<Word> head = splitWords(line.take_front(colon));
    SmallVector<Word> args = splitWords(line.drop_front(colon + 1));
    for (Word &w : args)
      w.col += colon + 1;
    if (head.empty())
      return fail(lineNo, colon + 1, "missing keyword before ':'");
    StringRef keyword = head[0].text;

    if (keyword == "base") {
      if (sawDirective)
        return fail(lineNo, head[0].col,
                    "'base:' must come before every other line");
      if (args.size() != 1 ||
          (args[0].text != "default" && args[0].text != "empty"))
        return fail(lineNo, head[0].col, "expected 'base: default' or 'base: empty'");
      if (args[0].text == "empty")
        policy.rules.clear();
      sawDirective = true;
      continue;
    }
    sawDirective = true;

    if (keyword == "pin") {
      if (head.size() != 2)
        return fail(lineNo, head[0].col,
                    "expected 'pin fp32|fp16|bf16|half: target...'");
      std::optional<PinPrecision> precision = parsePinPrecision(head[1].text);
      if (!precision)
        return fail(lineNo, head[1].col,
                    "unknown pin precision '" + head[1].text +
                        "' (expected fp32, fp16, bf16 or half)");
      if (args.empty())
        return fail(lineNo, head[0].col, "pin without targets");
      for (const Word &w : args) {
        Pin pin{*precision, lineNo, "", "", 0, 0, w.col};
        // FILE:LINE[:COL] when the word ends in :digits, a name otherwise.
        auto [rest, last] = w.text.rsplit(':');
        unsigned a = 0, b = 0;
        if (!last.empty() && !last.getAsInteger(10, a) && !rest.empty()) {
          auto [file, mid] = rest.rsplit(':');
          if (!mid.empty() && !file.empty() && !mid.getAsInteger(10, b)) {
            pin.file = file.str();
            pin.line = b;
            pin.col = a;
          } else {
            pin.file = rest.str();
            pin.line = a;
          }
          if (pin.line == 0)
            return fail(lineNo, w.col, "line numbers start at 1");
        } else {
          pin.name = w.text.str();
        }
        policy.pinList.push_back(std::move(pin));
      }
      continue;
    }

    std::optional<Category> category = parseCategory(keyword);
    if (!category || head.size() != 1)
      return fail(lineNo, head[0].col,
                  "unknown policy keyword '" + keyword +
                      "' (expected base, lower, fp32, promote, follow or pin)");
    for (const Word &w : args) {
      if (!isKnownOp(w.text))
        return fail(lineNo, w.col, "unknown op '" + w.text + "' in the policy");
      policy.set(w.text, OpRule{*category, "", lineNo});
    }
  }
  return policy;
}

std::string Pin::text() const {
  if (!name.empty())
    return name;
  return file + ":" + std::to_string(line) +
         (col ? ":" + std::to_string(col) : "");
}

void Policy::print(raw_ostream &os) const {
  for (Category c : {Category::Lower, Category::FP32, Category::Promote,
                     Category::Follow}) {
    os << categoryKeyword(c) << ":";
    for (StringRef op : knownOps()) {
      const OpRule *rule = lookup(op);
      if (rule && rule->category == c)
        os << " " << op;
    }
    os << "\n";
  }
  for (const Pin &pin : pinList) {
    os << "pin " << pinPrecisionName(pin.precision) << ": " << pin.text()
       << "\n";
  }
}

std::string ampc::amp::typeName(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

std::string ampc::amp::precisionName(mlir::Type t) {
  if (t.isF32())
    return "fp32";
  if (t.isF16())
    return "fp16";
  if (t.isBF16())
    return "bf16";
  return typeName(t);
}

//===- ParseGuard.cpp -------------------------------------------------------===//
#include "compiler/ParseGuard.h"

#include "compiler/InitAll.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <pthread.h>

using namespace llvm;

namespace {

// The tokens of MLIR's lexer that the scan needs to tell apart; everything
// else is Other.
enum class Kind {
  BareId,   // tensor, array, index, affine_map, floordiv, ...
  AliasId,  // !name (the text excludes the '!')
  OtherId,  // %x, @x, ^x, #x
  Open,     // ( [ { {-#
  Close,    // ) ] } #-}
  Less,     // <
  Greater,  // >
  Operator, // + - *
  Equal,    // =
  Split,    // a line starting with the split marker
  Other,    // numbers, strings, punctuation, stray bytes
  Eof,
};

struct Token {
  Kind kind;
  StringRef text;
  // For Open and Close: which bracket, as one of ( [ {.
  char bracket = 0;
};

bool isIdChar(char c) { return isAlnum(c) || c == '_' || c == '$' || c == '.'; }

// A lexer that agrees with MLIR's on what is a string, a comment and a
// bracket: MLIR has only `//` comments; a string ends at its closing quote,
// at a newline or at the end of the buffer, and `\` escapes the next byte.
class Lexer {
public:
  Lexer(StringRef text, StringRef splitMarker)
      : cur(text.begin()), end(text.end()), splitMarker(splitMarker) {}

  Token next() {
    while (true) {
      if (cur == end)
        return {Kind::Eof, StringRef(cur, 0)};
      if (atLineStart && !splitMarker.empty() &&
          StringRef(cur, end - cur).starts_with(splitMarker)) {
        const char *start = cur;
        skipLine();
        return {Kind::Split, StringRef(start, cur - start)};
      }
      atLineStart = false;
      char c = *cur;
      if (c == '\n') {
        atLineStart = true;
        ++cur;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        ++cur;
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        skipLine();
        continue;
      }
      break;
    }
    const char *start = cur;
    char c = *cur++;
    auto token = [&](Kind kind, char bracket = 0) {
      return Token{kind, StringRef(start, cur - start), bracket};
    };
    switch (c) {
    case '"':
      while (cur != end && *cur != '"' && *cur != '\n') {
        if (*cur == '\\' && cur + 1 != end && cur[1] != '\n')
          ++cur;
        ++cur;
      }
      if (cur != end && *cur == '"')
        ++cur;
      return token(Kind::Other);
    case '{':
      if (peek(0) == '-' && peek(1) == '#')
        cur += 2;
      return token(Kind::Open, '{');
    case '(':
    case '[':
      return token(Kind::Open, c);
    case ')':
      return token(Kind::Close, '(');
    case ']':
      return token(Kind::Close, '[');
    case '}':
      return token(Kind::Close, '{');
    case '<':
      return token(Kind::Less);
    case '>':
      return token(Kind::Greater);
    case '-':
      if (peek(0) == '>') {
        ++cur;
        return token(Kind::Other); // `->`
      }
      return token(Kind::Operator);
    case '+':
    case '*':
      return token(Kind::Operator);
    case '=':
      return token(Kind::Equal);
    case '#':
      if (peek(0) == '-' && peek(1) == '}') {
        cur += 2;
        return token(Kind::Close, '{');
      }
      [[fallthrough]];
    case '!':
    case '%':
    case '@':
    case '^':
      while (cur != end && (isIdChar(*cur) || *cur == '-'))
        ++cur;
      if (c == '!')
        return {Kind::AliasId, StringRef(start + 1, cur - start - 1)};
      return token(Kind::OtherId);
    default:
      break;
    }
    if (isAlpha(c) || c == '_') {
      while (cur != end && isIdChar(*cur))
        ++cur;
      return token(Kind::BareId);
    }
    if (isDigit(c)) {
      // 42, 0x2A, 1.5e-3; 2x3xf32 lexes as numbers and ids in MLIR, which
      // is all the same here.
      while (cur != end) {
        if (isIdChar(*cur)) {
          ++cur;
        } else if ((*cur == '-' || *cur == '+') &&
                   (cur[-1] == 'e' || cur[-1] == 'E') &&
                   !startsWithHex(start)) {
          ++cur;
        } else {
          break;
        }
      }
      return token(Kind::Other);
    }
    return token(Kind::Other);
  }

private:
  char peek(size_t ahead) const {
    return size_t(end - cur) > ahead ? cur[ahead] : '\0';
  }
  void skipLine() {
    while (cur != end && *cur != '\n')
      ++cur;
  }
  static bool startsWithHex(const char *start) {
    return start[0] == '0' && (start[1] == 'x' || start[1] == 'X');
  }

  const char *cur;
  const char *end;
  StringRef splitMarker;
  bool atLineStart = true;
};

struct Open {
  char bracket; // ( [ { or <
  const char *loc;
};

} // namespace

std::optional<ampc::PrescanError> ampc::prescanSource(StringRef text,
                                                      StringRef splitMarker) {
  Lexer lexer(text, splitMarker);
  SmallVector<Open, 64> stack;
  // Type aliases that stand for `index` (`!t = index`, `!u = !t`).
  StringSet<> indexAliases;
  // The open affine_map< / affine_set<, if any: the stack size with its '<'
  // pushed, and where it starts; affineOperators counts its operators.
  std::optional<std::pair<size_t, const char *>> affine;
  unsigned affineOperators = 0;
  Token prev{Kind::Other, {}};
  bool arrayElementNext = false;
  std::optional<StringRef> aliasDefinedNext;

  auto standsForIndex = [&](const Token &t) {
    return (t.kind == Kind::BareId && t.text == "index") ||
           (t.kind == Kind::AliasId && indexAliases.contains(t.text));
  };
  auto closeTo = [&](size_t size) {
    stack.truncate(size);
    if (affine && stack.size() < affine->first)
      affine.reset();
  };

  for (Token t = lexer.next(); t.kind != Kind::Eof;
       prev = t, t = lexer.next()) {
    if (t.kind == Kind::Split) {
      stack.clear();
      affine.reset();
      arrayElementNext = false;
      aliasDefinedNext.reset();
      continue;
    }

    // The element type of `array<`: MLIR 22's parseDenseArrayAttr accepts
    // index (isIntOrIndexOrFloat) and then calls getIntOrFloatBitWidth() on
    // it, which reads index as a FloatType: a segfault.
    if (arrayElementNext) {
      arrayElementNext = false;
      if (standsForIndex(t)) {
        std::string message =
            t.kind == Kind::AliasId
                ? ("type alias '!" + t.text +
                   "' stands for index, which is not a valid element type of "
                   "a dense array (array<...>); use i64")
                      .str()
                : std::string("index is not a valid element type of a dense "
                              "array (array<...>); use i64");
        return PrescanError{t.text.begin() - (t.kind == Kind::AliasId),
                            std::move(message)};
      }
    }
    if (aliasDefinedNext) {
      if (standsForIndex(t))
        indexAliases.insert(*aliasDefinedNext);
      aliasDefinedNext.reset();
    }
    if (t.kind == Kind::Equal && prev.kind == Kind::AliasId)
      aliasDefinedNext = prev.text;

    switch (t.kind) {
    case Kind::Open:
    case Kind::Less:
      stack.push_back({t.kind == Kind::Less ? '<' : t.bracket, t.text.begin()});
      if (stack.size() > kMaxNestingDepth)
        return PrescanError{t.text.begin(),
                            ("nesting deeper than " + Twine(kMaxNestingDepth) +
                             " levels of (), [], {} and <> is not supported")
                                .str()};
      if (t.kind == Kind::Less && prev.kind == Kind::BareId) {
        if (prev.text == "array")
          arrayElementNext = true;
        if ((prev.text == "affine_map" || prev.text == "affine_set") &&
            !affine) {
          affine.emplace(stack.size(), prev.text.begin());
          affineOperators = 0;
        }
      }
      break;
    case Kind::Greater:
      // `>` closes a `<` only: in affine sets it is also a comparison.
      if (!stack.empty() && stack.back().bracket == '<')
        closeTo(stack.size() - 1);
      break;
    case Kind::Close:
      // Closes its bracket and any `<` left open inside it; a stray closer
      // is left to the parser to report.
      for (size_t i = stack.size(); i-- > 0;) {
        if (stack[i].bracket == t.bracket) {
          closeTo(i);
          break;
        }
        if (stack[i].bracket != '<')
          break;
      }
      break;
    case Kind::Operator:
    case Kind::BareId:
      if (affine && (t.kind == Kind::Operator || t.text == "floordiv" ||
                     t.text == "ceildiv" || t.text == "mod")) {
        if (++affineOperators > kMaxAffineOperators)
          return PrescanError{affine->second,
                              ("affine expressions with more than " +
                               Twine(kMaxAffineOperators) +
                               " operators are not supported")
                                  .str()};
      }
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

void ampc::printPrescanError(StringRef bufferName, StringRef text,
                             const PrescanError &error, raw_ostream &os) {
  size_t offset = error.loc - text.begin();
  size_t lineStart = text.rfind('\n', offset);
  lineStart = lineStart == StringRef::npos ? 0 : lineStart + 1;
  size_t lineEnd = text.find('\n', offset);
  if (lineEnd == StringRef::npos)
    lineEnd = text.size();
  size_t line = 1 + text.take_front(lineStart).count('\n');
  size_t column = offset - lineStart + 1;

  WithColor::error(os,
                   (bufferName + ":" + Twine(line) + ":" + Twine(column)).str())
      << error.message << "\n";

  // The source line with a caret; a long one (100,000 `[`) as an excerpt.
  constexpr size_t kLong = 160, kBefore = 80, kAfter = 40;
  size_t from = lineStart, to = lineEnd;
  bool cutFront = false, cutBack = false;
  if (lineEnd - lineStart > kLong) {
    if (offset - lineStart > kBefore) {
      from = offset - kBefore;
      cutFront = true;
    }
    if (lineEnd - offset > kAfter + 1) {
      to = offset + kAfter + 1;
      cutBack = true;
    }
  }
  std::string excerpt = (cutFront ? "..." : "") +
                        text.slice(from, to).rtrim("\r").str() +
                        (cutBack ? "..." : "");
  for (char &c : excerpt)
    if (c == '\t')
      c = ' ';
  os << excerpt << "\n"
     << std::string(offset - from + (cutFront ? 3 : 0), ' ') << "^\n";
}

bool ampc::prescanAndReport(StringRef bufferName, StringRef text,
                            StringRef splitMarker) {
  std::optional<PrescanError> error = prescanSource(text, splitMarker);
  if (!error)
    return true;
  printPrescanError(bufferName, text, *error, errs());
  return false;
}

void ampc::runWithParserStack(function_ref<void()> fn) {
  pthread_attr_t attr;
  pthread_t thread;
  bool started = false;
  if (pthread_attr_init(&attr) == 0) {
    auto trampoline = [](void *arg) -> void * {
      (*static_cast<function_ref<void()> *>(arg))();
      return nullptr;
    };
    started = pthread_attr_setstacksize(&attr, kParserStackBytes) == 0 &&
              pthread_create(&thread, &attr, trampoline, &fn) == 0;
    pthread_attr_destroy(&attr);
  }
  if (started)
    pthread_join(thread, nullptr);
  else
    fn(); // 1000 levels fit the main thread's usual 8 MiB too, barely.
}

void ampc::registerGuardedTranslation(
    StringRef name, StringRef description,
    std::function<mlir::LogicalResult(mlir::Operation *, raw_ostream &)> fn) {
  mlir::TranslateRegistration registration(
      name, description,
      [fn](const std::shared_ptr<SourceMgr> &sourceMgr, raw_ostream &output,
           mlir::MLIRContext *context) -> mlir::LogicalResult {
        const MemoryBuffer *buffer =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        if (!prescanAndReport(buffer->getBufferIdentifier(),
                              buffer->getBuffer()))
          return mlir::failure();
        mlir::DialectRegistry registry;
        registerAllDialects(registry);
        context->appendDialectRegistry(registry);
        mlir::OwningOpRef<mlir::Operation *> op =
            mlir::parseSourceFileForTool(sourceMgr, mlir::ParserConfig(context),
                                         /*insertImplicitModule=*/true);
        if (!op || mlir::failed(mlir::verify(*op)))
          return mlir::failure();
        return fn(op.get(), output);
      });
}

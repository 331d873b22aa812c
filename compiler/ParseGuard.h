//===- ParseGuard.h - Keep hostile text away from MLIR's parser -*- C++ -*-===//
//
// MLIR 22's parser crashes on some well-formed-looking text and recurses
// once per nesting level, so a model file must never reach it unchecked.
// Everything that parses user text (ampc's loadModelFile, ampc-opt,
// ampc-translate) first runs prescanSource() and then parses inside
// runWithParserStack():
//
//  - prescanSource() is a small lexer (it skips strings and `//` comments,
//    like MLIR's) that rejects the forms MLIR 22 cannot survive:
//      * `array<index: ...>` (also through a type alias `!t = index`):
//        Parser::parseDenseArrayAttr asks the index type for its bit width
//        and segfaults (fixed upstream after 22.1). Every other element type
//        is handled by the parser itself (an error, or a valid attribute);
//      * nesting of ( [ { < deeper than kMaxNestingDepth: each level is a
//        recursive call of the parser;
//      * more than kMaxAffineOperators operators in one affine_map<...> or
//        affine_set<...>: `- - - d0` and `d0 + d0 + ...` recurse once per
//        operator, in the parser and in AffineExpr's simplifications, without
//        any bracket.
//  - runWithParserStack() runs a function on a thread with a
//    kParserStackBytes stack, so nesting below the bound cannot overflow the
//    stack in parsing, verification or the passes that follow.
//
// Stack per nesting level, measured on ampc-opt (parse, verify, print) with
// an 8 MiB stack by the deepest input that survives:
//    func.func @f() { func.func ...    2938 bytes/level (the worst)
//    graph.model @m { graph.model ...  2420
//    module { module { ...             2161
//    "builtin.module"() ({ ...         2034 (4068 per ({ pair)
//    {a = {a = ...                     1374
//    [[[ ... ]]] in an attribute       1236
//    dense<[[[1]]]>                     627
//    ((( ))) -> () function types       449
//    tuple<tuple<...>>, loc(callsite(   290
//    affine: unary minus 1123, `+` 112, `*` 21 bytes per operator
// So 1000 levels need about 3 MiB; 64 MiB leaves a margin of 20x.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_PARSEGUARD_H
#define AMPC_COMPILER_PARSEGUARD_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace mlir {
class Operation;
} // namespace mlir

namespace ampc {

inline constexpr unsigned kMaxNestingDepth = 1000;
inline constexpr unsigned kMaxAffineOperators = 1000;
inline constexpr std::size_t kParserStackBytes = std::size_t(64) << 20;

// Why a text was rejected: |loc| points into the scanned text.
struct PrescanError {
  const char *loc;
  std::string message;
};

// Scans |text| for what MLIR 22's parser cannot survive (see above); returns
// the first such place, or nothing. With a non-empty |splitMarker| (ampc-opt's
// --split-input-file), a line starting with it begins a fresh scan, as the
// driver parses each chunk on its own.
std::optional<PrescanError> prescanSource(llvm::StringRef text,
                                          llvm::StringRef splitMarker = {});

// Prints |error| as `bufferName:line:col: error: message`, then the source
// line and a caret (an excerpt around the column when the line is long).
void printPrescanError(llvm::StringRef bufferName, llvm::StringRef text,
                       const PrescanError &error, llvm::raw_ostream &os);

// Both of the above: scans |text| and prints the error, if any, to stderr.
// Returns true when |text| may be handed to MLIR's parser.
bool prescanAndReport(llvm::StringRef bufferName, llvm::StringRef text,
                      llvm::StringRef splitMarker = {});

// Runs |fn| to completion on a thread with a kParserStackBytes stack (on the
// calling thread if no such thread can be created).
void runWithParserStack(llvm::function_ref<void()> fn);

// Registers a translation like mlir::TranslateFromMLIRRegistration (every
// ampc dialect, implicit module, verify, then |fn|) whose input is
// pre-scanned first. Its parser needs the large stack too: ampc-translate's
// main runs mlirTranslateMain inside runWithParserStack.
void registerGuardedTranslation(
    llvm::StringRef name, llvm::StringRef description,
    std::function<mlir::LogicalResult(mlir::Operation *, llvm::raw_ostream &)>
        fn);

} // namespace ampc

#endif

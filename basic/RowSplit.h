// The rules of whole-tensor tile programs (docs/language.md, section 4), as pure functions of
// shapes and uses, so that sema (sema/analyses/RowSplit.cpp: located refusals on the typed AST) and the
// Tile IR pass that does the split (ir/passes/RowPartition.cpp) decide from one source.
//
// The output is the first writable tensor parameter. When its leading extent is a symbol, its
// rows are split into blocks of kRowBlock across groups (grid-stride); every tensor parameter
// whose leading extent is that symbol stands for its block of rows, a rank-2 parameter with the
// symbol second that is used only transposed for its block of columns, the others whole.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::rowsplit {

inline constexpr int64_t kRowBlock = 16;

enum class Rule : uint8_t {
#define ROW_RULE(ID, TEXT) ID,
#include "basic/RowSplit.def"
};

// "the right operand of a matrix product (it contracts over rows)", ...
const char* ruleText(Rule r);
// True for the rules of a value with all the output's rows (err_*rows_not_split); the others
// are uses of a block that mix its rows (err_*rows_not_independent).
bool isWholeRowsRule(Rule r);

// How a tensor parameter is split, from its rank, whether its first and second extents are the
// output's row symbol, and whether the body uses it only transposed ('A.T').
enum class ParamSplit : uint8_t { Whole, Rows, Columns };
ParamSplit classifyParam(size_t rank, bool firstIsRowSym, bool secondIsRowSym, bool onlyTransposed);

// A reduction or softmax of a block along `axis` (negative from the end) mixes rows when the
// axis is the rows' (0).
bool axisMixesRows(int64_t axis, size_t rank);
// Broadcasting a block of rank `from` to rank `to` puts its rows along another axis.
bool broadcastMixesRows(size_t from, size_t to);

}  // namespace tessera::rowsplit

// The rules of whole-tensor tile programs (basic/RowSplit.h).
#include "basic/RowSplit.h"

namespace tessera::rowsplit {

const char* ruleText(Rule r) {
  switch (r) {
#define ROW_RULE(ID, TEXT) \
  case Rule::ID: return TEXT;
#include "basic/RowSplit.def"
  }
  return "";
}

bool isWholeRowsRule(Rule r) { return r == Rule::BroadcastWholeRows || r == Rule::StoreWholeRows; }

ParamSplit classifyParam(size_t rank, bool firstIsRowSym, bool secondIsRowSym, bool onlyTransposed) {
  if (rank == 2 && !firstIsRowSym && secondIsRowSym && onlyTransposed) return ParamSplit::Columns;
  if (rank > 0 && firstIsRowSym) return ParamSplit::Rows;
  return ParamSplit::Whole;
}

bool axisMixesRows(int64_t axis, size_t rank) { return axis == 0 || axis + static_cast<int64_t>(rank) == 0; }

bool broadcastMixesRows(size_t from, size_t to) { return from > 0 && from < to; }

}  // namespace tessera::rowsplit

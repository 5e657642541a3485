// The token-stream formatter (Format.h).
#include "frontend/Format.h"

#include <algorithm>
#include <vector>

#include "basic/Diagnostics.h"
#include "frontend/Lexer.h"

namespace tessera {

namespace {

using TK = TokenKind;

bool isOpen(TK k) { return k == TK::l_paren || k == TK::l_square || k == TK::l_brace; }
bool isClose(TK k) { return k == TK::r_paren || k == TK::r_square || k == TK::r_brace; }
bool isLayout(TK k) { return k == TK::Newline || k == TK::Indent || k == TK::Dedent || k == TK::Eof; }
bool isValueKeyword(TK k) { return k == TK::kw_True || k == TK::kw_False || k == TK::kw_None; }
bool isLiteral(TK k) {
  return k == TK::IntLiteral || k == TK::FloatLiteral || k == TK::StringLiteral || k == TK::FStringLiteral;
}
// Tokens after which an expression has ended (so a following operator is binary).
bool endsOperand(TK k) {
  return k == TK::Identifier || isLiteral(k) || isValueKeyword(k) || isClose(k) || k == TK::ellipsis;
}
bool isPolicyName(std::string_view s) {
  return s == "accum" || s == "round" || s == "saturate" || s == "scale" || s == "stochastic_round";
}

std::string_view rstrip(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\f'))
    s.remove_suffix(1);
  return s;
}

struct Frame {
  TK kind;
  bool sawColon = false;  // a ':' at this level since the last ',' (an annotated parameter)
};

class Formatter {
 public:
  Formatter(const SourceManager& sm, FileID file, const std::vector<Token>& toks)
      : sm_(sm), toks_(toks), base_(sm.bufferStart(file).offset), text_(sm.bufferText(file)) {}

  std::string run() {
    indentCols_.push_back(0);
    for (size_t i = 0; i < toks_.size(); ++i) {
      const Token& t = toks_[i];
      switch (t.kind) {
        case TK::Indent:
          ++depth_;
          indentCols_.push_back(columnOf(t.range.end.offset));
          continue;
        case TK::Dedent:
          if (depth_ > 0) --depth_;
          if (indentCols_.size() > 1) indentCols_.pop_back();
          continue;
        case TK::Newline: endLine(); continue;
        case TK::Eof:
          flushComments(0);
          endLine();
          continue;
        case TK::Comment:
          if (t.atLineStart && !inLine_) {
            pendingComments_.push_back(i);
            continue;
          }
          emitTrailingComment(t);
          continue;
        default: emitToken(i);
      }
    }
    while (!out_.empty() && out_.back() == '\n') out_.pop_back();
    if (!out_.empty()) out_ += '\n';
    return out_;
  }

 private:
  uint32_t offsetOf(const Token& t) const { return t.range.begin.offset - base_; }
  uint32_t endOf(const Token& t) const { return t.range.end.offset - base_; }
  unsigned columnOf(uint32_t absOffset) const {
    uint32_t off = absOffset - base_;
    uint32_t start = off;
    while (start > 0 && text_[start - 1] != '\n' && text_[start - 1] != '\r') --start;
    return off - start;
  }
  // Newlines between the end of the last emitted text and `offset`.
  unsigned newlinesBefore(uint32_t offset) const {
    unsigned n = 0;
    for (uint32_t p = lastEnd_; p < offset && p < text_.size(); ++p)
      if (text_[p] == '\n') ++n;
    return n;
  }
  void indent(unsigned levels) { out_.append(levels * 4, ' '); }

  void blankLinesBefore(uint32_t offset) {
    if (out_.empty()) return;  // no blank lines at the start of the file
    unsigned nl = newlinesBefore(offset);
    unsigned blanks = nl > 1 ? std::min(nl - 1, 2u) : 0;
    for (unsigned b = 0; b < blanks; ++b) out_ += '\n';
  }

  // Comment-only lines before the next code line: each goes to the deepest block level between
  // the previous code line's and the next one's whose column does not exceed the comment's.
  void flushComments(unsigned nextDepth) {
    for (size_t idx : pendingComments_) {
      const Token& c = toks_[idx];
      unsigned lo = std::min(prevDepth_, nextDepth), hi = std::max(prevDepth_, nextDepth);
      const std::vector<unsigned>& cols = prevCols_.size() > indentCols_.size() ? prevCols_ : indentCols_;
      unsigned col = columnOf(c.range.begin.offset);
      unsigned d = lo;
      for (unsigned k = hi + 1; k-- > lo;)
        if (k < cols.size() && cols[k] <= col) {
          d = k;
          break;
        }
      blankLinesBefore(offsetOf(c));
      indent(d);
      out_ += rstrip(c.text);
      out_ += '\n';
      lastEnd_ = endOf(c);
    }
    pendingComments_.clear();
  }

  void emitTrailingComment(const Token& c) {
    if (!frames_.empty() && newlinesBefore(offsetOf(c)) > 0) {
      // a comment on a line of its own inside brackets stays there
      out_ += '\n';
      indent(depth_ + static_cast<unsigned>(frames_.size()));
    } else {
      out_ += "  ";
    }
    out_ += rstrip(c.text);
    lastEnd_ = endOf(c);
    afterComment_ = true;
  }

  void endLine() {
    if (!inLine_) return;
    out_ += '\n';
    inLine_ = false;
    afterComment_ = false;
    prevTok_ = -1;
    frames_.clear();
    prevDepth_ = depth_;
    prevCols_ = indentCols_;
  }

  void emitToken(size_t i) {
    const Token& t = toks_[i];
    if (!inLine_) {
      flushComments(depth_);
      blankLinesBefore(offsetOf(t));
      indent(depth_);
      inLine_ = true;
      lineStartTok_ = i;
    } else if (afterComment_ || newlinesBefore(offsetOf(t)) > 0) {
      // A physical line break inside the logical line: inside brackets it is kept; outside
      // them the line was continued with a backslash.
      unsigned levels = static_cast<unsigned>(frames_.size());
      if (isClose(t.kind) && levels > 0) --levels;
      if (frames_.empty()) out_ += " \\";
      if (!out_.empty() && out_.back() == ' ' && !frames_.empty()) out_.pop_back();
      out_ += '\n';
      indent(depth_ + (frames_.empty() ? 1 : levels));
      afterComment_ = false;
    } else if (prevTok_ >= 0 && needsSpace(static_cast<size_t>(prevTok_), i)) {
      out_ += ' ';
    }
    out_ += t.text;
    lastEnd_ = endOf(t);
    track(i);
    prevTok_ = static_cast<long>(i);
  }

  void track(size_t i) {
    TK k = toks_[i].kind;
    if (isOpen(k))
      frames_.push_back({k});
    else if (isClose(k) && !frames_.empty())
      frames_.pop_back();
    else if (k == TK::comma && !frames_.empty())
      frames_.back().sawColon = false;
    else if (k == TK::colon && !frames_.empty())
      frames_.back().sawColon = true;
  }

  // Is the token at `i` a prefix operator (unary -, +, ~, *, **, or a decorator's @)?
  bool isPrefixOperator(size_t i) const {
    TK k = toks_[i].kind;
    if (k != TK::minus && k != TK::plus && k != TK::tilde && k != TK::star && k != TK::starstar) return false;
    if (i == lineStartTok_) return true;
    size_t p = i;
    while (p-- > lineStartTok_)
      if (toks_[p].kind != TK::Comment) return !isOperandEnd(p);
    return true;
  }
  // `@` opening a decorator: at the line's start, or later on a decorator line (`@jit @autodiff`).
  bool isDecoratorAt(size_t i) const {
    return toks_[i].kind == TK::at && (i == lineStartTok_ || (toks_[lineStartTok_].kind == TK::at && frames_.empty()));
  }
  // A keyword spelled after '.' is an attribute name (`cp_async.shared.global`).
  bool isOperandEnd(size_t i) const {
    TK k = toks_[i].kind;
    if (endsOperand(k)) return true;
    return isKeyword(k) && i > lineStartTok_ && toks_[i - 1].kind == TK::period;
  }
  // Inside `[...]`, is the token at `i` part of a slice item (`t:t+128`)? Such items are
  // written without spaces around their operators.
  bool inSliceItem(size_t i) const {
    if (frames_.empty() || frames_.back().kind != TK::l_square) return false;
    if (frames_.back().sawColon) return true;
    int depth = 0;
    for (size_t j = i; j < toks_.size() && !isLayout(toks_[j].kind); ++j) {
      TK k = toks_[j].kind;
      if (isOpen(k))
        ++depth;
      else if (isClose(k) && depth-- == 0)
        return false;
      else if (depth == 0 && k == TK::comma)
        return false;
      else if (depth == 0 && k == TK::colon)
        return true;
    }
    return false;
  }
  static bool isArithmetic(TK k) {
    return k == TK::plus || k == TK::minus || k == TK::star || k == TK::slash || k == TK::slashslash ||
           k == TK::percent || k == TK::starstar;
  }
  bool isPolicyAt(size_t i) const {
    return toks_[i].kind == TK::at && i + 1 < toks_.size() && toks_[i + 1].kind == TK::Identifier &&
           isPolicyName(toks_[i + 1].text);
  }

  bool needsSpace(size_t pi, size_t ci) const {
    TK p = toks_[pi].kind, c = toks_[ci].kind;
    TK inner = frames_.empty() ? TK::Eof : frames_.back().kind;
    if (c == TK::comma || c == TK::semi || isClose(c)) return false;
    if (isOpen(p)) return false;
    if (p == TK::comma || p == TK::semi) return true;
    if (p == TK::period) return c == TK::kw_import;                  // `from . import x`
    if (c == TK::period) return isKeyword(p) && !isValueKeyword(p);  // `from .mod import`
    if (c == TK::colon) return false;
    if (p == TK::colon) return inner != TK::l_square;  // slices have no spaces
    if (isDecoratorAt(pi) || isPolicyAt(pi)) return false;
    if (isPrefixOperator(pi)) return false;
    if ((isArithmetic(c) && !isPrefixOperator(ci)) || isArithmetic(p))
      if (inSliceItem(ci)) return false;
    if (c == TK::equal || p == TK::equal) {
      // keyword arguments and unannotated defaults: `f(axis=0)`; annotated: `x: int = 1`
      if (inner == TK::Eof) return true;
      return inner == TK::l_paren && frames_.back().sawColon;
    }
    if (isOpen(c)) return !isOperandEnd(pi) || p == TK::ellipsis;  // calls and subscripts hug
    return true;
  }

  const SourceManager& sm_;
  const std::vector<Token>& toks_;
  uint32_t base_;
  std::string_view text_;
  std::string out_;
  unsigned depth_ = 0, prevDepth_ = 0;
  std::vector<unsigned> indentCols_, prevCols_;
  std::vector<size_t> pendingComments_;
  std::vector<Frame> frames_;
  bool inLine_ = false, afterComment_ = false;
  long prevTok_ = -1;
  size_t lineStartTok_ = 0;
  uint32_t lastEnd_ = 0;
};

// The tokens that carry meaning, with comments trimmed as the formatter writes them.
std::vector<std::pair<TK, std::string>> significant(const std::vector<Token>& toks) {
  std::vector<std::pair<TK, std::string>> out;
  for (const Token& t : toks)
    if (t.kind != TK::Indent && t.kind != TK::Dedent && t.kind != TK::Newline && t.kind != TK::Eof)
      out.emplace_back(t.kind, std::string(t.kind == TK::Comment ? rstrip(t.text) : t.text));
  return out;
}
// The block structure: Indent/Dedent/Newline in order.
std::vector<TK> layout(const std::vector<Token>& toks) {
  std::vector<TK> out;
  for (const Token& t : toks)
    if (isLayout(t.kind)) out.push_back(t.kind);
  return out;
}

}  // namespace

FormatResult formatSource(std::string_view text, std::string_view bufferName) {
  FormatResult r;
  SourceManager sm;
  FileID file = sm.addBuffer(std::string(bufferName), std::string(text));
  DiagnosticEngine diags(sm);
  diags.setErrorLimit(0);
  std::vector<Token> toks = lexBuffer(sm, file, diags, LexOptions{true});
  if (diags.hasErrors()) {
    r.error = "the buffer has lexical errors; fix them before formatting";
    return r;
  }
  std::string formatted = Formatter(sm, file, toks).run();

  // Self-check: the same tokens and the same block structure, or we refuse.
  SourceManager sm2;
  FileID file2 = sm2.addBuffer(std::string(bufferName), formatted);
  DiagnosticEngine diags2(sm2);
  std::vector<Token> toks2 = lexBuffer(sm2, file2, diags2, LexOptions{true});
  if (diags2.hasErrors() || significant(toks) != significant(toks2) || layout(toks) != layout(toks2)) {
    r.error = "internal error: the formatted text would change the program; the buffer is left as it is";
    return r;
  }
  r.ok = true;
  r.text = std::move(formatted);
  return r;
}

}  // namespace tessera

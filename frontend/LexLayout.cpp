// The indentation layer: turns the raw scanner's physical lines into Python's logical lines
// (Newline, Indent, Dedent), and the two entry points lexBuffer and lexFragment.
#include <string>

#include "frontend/FrontendDiagnostics.h"
#include "frontend/LexScanner.h"
#include "frontend/Lexer.h"

namespace tessera {

namespace {

// One open block. `col` counts tabs to the next multiple of 8, `altCol` counts a tab as one
// column; a line whose order differs between the two is ambiguous (CPython's TabError).
// A level pushed to recover from a bad unindent has no Indent token, so it pops silently.
struct Level {
  unsigned col, altCol;
  bool hasToken;
};

class Layout {
 public:
  Layout(Scanner& s, DiagnosticEngine& diags, LexOptions opts, std::vector<Token>& out)
      : s_(s), diags_(diags), opts_(opts), out_(out) {
    levels_.reserve(16);
    levels_.push_back({0, 0, true});
  }

  void run() {
    bool atLineStart = true;  // at the start of a physical line outside brackets
    bool lineHasTokens = false;
    for (;;) {
      if (atLineStart) {
        atLineStart = false;
        indentation();
      }
      RawToken t = s_.next();
      switch (t.kind) {
        case TokenKind::Newline:
          if (depth_ > 0) continue;  // implicit joining inside brackets
          if (lineHasTokens) push(TokenKind::Newline, t.begin, t.end, false);
          lineHasTokens = false;
          atLineStart = true;
          continue;
        case TokenKind::Comment:
          if (opts_.keepComments) push(TokenKind::Comment, t.begin, t.end, s_.startsLine(t.begin));
          continue;
        case TokenKind::Eof:
          if (lineHasTokens) push(TokenKind::Newline, t.begin, t.begin, false);
          for (size_t i = levels_.size(); i-- > 1;)
            if (levels_[i].hasToken) push(TokenKind::Dedent, t.begin, t.begin, false);
          push(TokenKind::Eof, t.begin, t.begin, false);
          return;
        case TokenKind::l_paren:
        case TokenKind::l_square:
        case TokenKind::l_brace: ++depth_; break;
        case TokenKind::r_paren:
        case TokenKind::r_square:
        case TokenKind::r_brace:
          if (depth_ > 0) --depth_;  // a stray closer is the parser's to report
          break;
        default: break;
      }
      push(t.kind, t.begin, t.end, !lineHasTokens || s_.startsLine(t.begin));
      lineHasTokens = true;
    }
  }

 private:
  // Measures the leading blanks of a line; on a line with a token, emits Indent or Dedents.
  void indentation() {
    const unsigned char* lineStart = s_.cur;
    const unsigned char* p = lineStart;
    unsigned col = 0, altCol = 0;
    for (;; ++p) {
      if (*p == ' ') {
        ++col, ++altCol;
      } else if (*p == '\t') {
        col = (col / 8 + 1) * 8;
        ++altCol;
      } else if (*p == '\f') {
        col = altCol = 0;  // form feed resets the count, as in CPython
      } else {
        break;
      }
    }
    s_.cur = p;
    unsigned char c = *p;
    // Blank and comment-only lines (and a trailing blank line) do not count.
    if (c == '\n' || c == '\r' || c == '#' || (c == 0 && s_.atEnd(p))) return;
    Level& top = levels_.back();
    if (col == top.col) {
      if (altCol != top.altCol) tabError(lineStart, p);
      return;
    }
    if (col > top.col) {
      if (altCol <= top.altCol) tabError(lineStart, p);
      levels_.push_back({col, altCol, true});
      push(TokenKind::Indent, lineStart, p, false);
      return;
    }
    while (levels_.size() > 1 && col < levels_.back().col) {
      if (levels_.back().hasToken) push(TokenKind::Dedent, p, p, false);
      levels_.pop_back();
    }
    Level& outer = levels_.back();
    if (col != outer.col) {
      diags_.report(diag::err_lex_bad_dedent, s_.loc(p));
      levels_.push_back({col, altCol, false});
    } else if (altCol != outer.altCol) {
      tabError(lineStart, p);
    }
  }

  void tabError(const unsigned char* b, const unsigned char* e) {
    diags_.report(diag::err_lex_inconsistent_tabs, s_.range(b, e));
  }

  void push(TokenKind k, const unsigned char* b, const unsigned char* e, bool lineStart) {
    Token t;
    t.kind = k;
    t.range = s_.range(b, e);
    bool layout = k == TokenKind::Newline || k == TokenKind::Indent || k == TokenKind::Dedent || k == TokenKind::Eof;
    if (!layout) t.text = s_.text(b, e);
    t.atLineStart = lineStart;
    out_.push_back(t);
  }

  Scanner& s_;
  DiagnosticEngine& diags_;
  LexOptions opts_;
  std::vector<Token>& out_;
  std::vector<Level> levels_;
  unsigned depth_ = 0;
};

}  // namespace

std::vector<Token> lexBuffer(const SourceManager& sm, FileID file, DiagnosticEngine& diags, LexOptions opts) {
  std::string_view text = sm.bufferText(file);
  std::vector<Token> tokens;
  // Dense code has about one token per 3 bytes. Pages of the reserve that are never written are
  // never touched (large allocations are mapped lazily), so reserving generously costs nothing
  // and saves the copy of a reallocation.
  tokens.reserve(text.size() / 2 + 16);
  size_t skip = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;  // a UTF-8 byte order mark
  // text is a std::string's view, so text.data()[text.size()] is the '\0' sentinel.
  Scanner scanner(text.data() + skip, text.data() + text.size(), text.data() + skip,
                  sm.bufferStart(file).offset + static_cast<uint32_t>(skip), diags);
  Layout(scanner, diags, opts, tokens).run();
  return tokens;
}

std::vector<Token> lexFragment(const SourceManager& sm, SourceRange range, DiagnosticEngine& diags) {
  std::vector<Token> tokens;
  if (!range.valid() || !range.end.valid() || range.end < range.begin) {
    Token eof;
    eof.range = SourceRange(range.begin);
    tokens.push_back(eof);
    return tokens;
  }
  std::string_view text = sm.text(range);
  // A NUL-terminated copy gives the scanner its sentinel at the fragment's end; locations and
  // token texts still refer to the original buffer.
  std::string copy(text);
  tokens.reserve(text.size() / 2 + 2);
  Scanner s(copy.data(), copy.data() + copy.size(), text.data(), range.begin.offset, diags);
  s.startIsLineStart = false;
  for (;;) {
    RawToken t = s.next();
    if (t.kind == TokenKind::Newline || t.kind == TokenKind::Comment) continue;
    Token tok;
    tok.kind = t.kind;
    tok.range = s.range(t.begin, t.end);
    if (t.kind != TokenKind::Eof) tok.text = s.text(t.begin, t.end);
    tok.atLineStart = t.kind != TokenKind::Eof && s.startsLine(t.begin);
    tokens.push_back(tok);
    if (t.kind == TokenKind::Eof) break;
  }
  return tokens;
}

}  // namespace tessera

// The Tile IR parser: a hand-written lexer and recursive-descent parser driven by the op table.
// It stops at the first error (reported with its exact location) and never crashes: recursion
// is bounded by kMaxNesting and every token is checked before use.
#include <charconv>
#include <cmath>

#include "ir/AsmFormat.h"
#include "ir/IRDiagnostics.h"

namespace tessera::ir {

namespace {

enum class Tok {
  Eof,
  Error,
  Percent,
  At,
  Caret,
  Bang,
  Bare,
  Int,
  Float,
  String,
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Less,
  Greater,
  Comma,
  Colon,
  Equal,
  Arrow,
  Question,
};

struct Token {
  Tok kind = Tok::Eof;
  uint32_t begin = 0, end = 0;  // offsets in the buffer
  std::string_view text;        // the whole token
  bool newlineBefore = false;   // a line break separates it from the previous token
};

bool isIdStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdChar(char c) { return isIdStart(c) || isDigit(c) || c == '.' || c == '$'; }

class Parser {
 public:
  Parser(const SourceManager& sm, FileID file, DiagnosticEngine& diags, uint32_t begin, uint32_t end)
      : sm_(sm), file_(file), diags_(diags), text_(sm.bufferText(file)) {
    pos_ = std::min<size_t>(begin, text_.size());
    end_ = std::min<size_t>(end, text_.size());
    if (pos_ > end_) pos_ = end_;
  }

  std::unique_ptr<Module> run() {
    module_ = std::make_unique<Module>();
    ctx_ = &module_->ctx();
    lex();
    while (!failed_ && tok_.kind != Tok::Eof) {
      if (tok_.kind == Tok::Bare && tok_.text == "tile.func") {
        parseFunc();
      } else {
        expected("'tile.func'");
      }
    }
    if (failed_) return nullptr;
    return std::move(module_);
  }

 private:
  const SourceManager& sm_;
  FileID file_;
  DiagnosticEngine& diags_;
  std::string_view text_;
  size_t pos_ = 0, end_ = 0;
  Token tok_;
  bool failed_ = false;
  unsigned depth_ = 0;
  std::unique_ptr<Module> module_;
  IRContext* ctx_ = nullptr;
  // Names of the values of the current function, and where each was defined.
  std::unordered_map<std::string, std::pair<Value*, uint32_t>> values_;
  std::unordered_map<std::string, uint32_t> funcDefs_;

  // ---- diagnostics ----

  SourceRange range(uint32_t b, uint32_t e) const {
    return SourceRange(sm_.locAt(file_, b), sm_.locAt(file_, std::max(e, b + 1)));
  }
  SourceRange tokRange() const { return range(tok_.begin, tok_.end); }
  DiagBuilder error(DiagID id, SourceRange r) {
    failed_ = true;
    tok_.kind = Tok::Eof;  // stop everything
    return diags_.report(id, r);
  }
  static std::string show(std::string_view s) {
    std::string out;
    for (unsigned char c : s.substr(0, 24)) {
      if (c < 0x20 || c >= 0x7f) {
        static const char* hex = "0123456789abcdef";
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
    }
    if (s.size() > 24) out += "...";
    return out;
  }
  void expected(std::string_view what) {
    if (failed_) return;
    std::string found = tok_.kind == Tok::Eof ? std::string("end of input") : show(tok_.text);
    SourceRange r = tokRange();
    error(diag::err_ir_expected, r) << what << found;
  }

  // ---- lexer ----

  char at(size_t i) const { return i < end_ ? text_[i] : '\0'; }

  void lex() {
    if (failed_) return;
    tok_.newlineBefore = false;
    for (;;) {
      while (pos_ < end_ && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
        if (text_[pos_] == '\n') tok_.newlineBefore = true;
        ++pos_;
      }
      if (pos_ + 1 < end_ && text_[pos_] == '/' && text_[pos_ + 1] == '/') {
        while (pos_ < end_ && text_[pos_] != '\n') ++pos_;
        continue;
      }
      break;
    }
    size_t b = pos_;
    auto make = [&](Tok k, size_t e) {
      tok_.kind = k;
      tok_.begin = static_cast<uint32_t>(b);
      tok_.end = static_cast<uint32_t>(e);
      tok_.text = text_.substr(b, e - b);
      pos_ = e;
    };
    if (pos_ >= end_) return make(Tok::Eof, pos_);
    char c = text_[pos_];
    auto idEnd = [&](size_t i) {
      while (i < end_ && isIdChar(text_[i])) ++i;
      return i;
    };
    switch (c) {
      case '(': return make(Tok::LParen, b + 1);
      case ')': return make(Tok::RParen, b + 1);
      case '{': return make(Tok::LBrace, b + 1);
      case '}': return make(Tok::RBrace, b + 1);
      case '[': return make(Tok::LBracket, b + 1);
      case ']': return make(Tok::RBracket, b + 1);
      case '<': return make(Tok::Less, b + 1);
      case '>': return make(Tok::Greater, b + 1);
      case ',': return make(Tok::Comma, b + 1);
      case ':': return make(Tok::Colon, b + 1);
      case '=': return make(Tok::Equal, b + 1);
      case '?': return make(Tok::Question, b + 1);
      case '%':
      case '@':
      case '^':
      case '!': {
        size_t e = c == '%' ? idEnd(b + 1) : (isIdStart(at(b + 1)) ? idEnd(b + 1) : b + 1);
        if (c == '%') {
          // %-names may also contain '-' (as MLIR allows) but must not be empty.
          while (e < end_ && (isIdChar(text_[e]) || text_[e] == '-')) ++e;
        }
        if (e == b + 1) {
          make(Tok::Error, b + 1);
          SourceRange r = tokRange();
          error(diag::err_ir_expected, r) << "a name after '" + std::string(1, c) + "'" << show(text_.substr(b, 1));
          return;
        }
        Tok k = c == '%' ? Tok::Percent : c == '@' ? Tok::At : c == '^' ? Tok::Caret : Tok::Bang;
        return make(k, e);
      }
      case '"': {
        size_t i = b + 1;
        while (i < end_ && text_[i] != '"' && text_[i] != '\n') i += text_[i] == '\\' ? 2 : 1;
        if (i >= end_ || text_[i] != '"') {
          make(Tok::Error, std::min(i, end_));
          SourceRange r = range(tok_.begin, tok_.begin + 1);
          error(diag::err_ir_unterminated_string, r);
          return;
        }
        return make(Tok::String, i + 1);
      }
      default: break;
    }
    if (c == '-' && at(b + 1) == '>') return make(Tok::Arrow, b + 2);
    if (isDigit(c) || (c == '-' && (isDigit(at(b + 1)) || at(b + 1) == 'i'))) {
      size_t i = b + (c == '-' ? 1 : 0);
      if (at(i) == 'i') {  // -inf
        size_t e = idEnd(i);
        return make(text_.substr(i, e - i) == "inf" ? Tok::Float : Tok::Error, e), checkNumber();
      }
      bool isFloat = false;
      while (isDigit(at(i))) ++i;
      if (at(i) == '.') {
        isFloat = true;
        ++i;
        while (isDigit(at(i))) ++i;
      }
      if (at(i) == 'e' || at(i) == 'E') {
        size_t j = i + 1;
        if (at(j) == '+' || at(j) == '-') ++j;
        if (isDigit(at(j))) {
          isFloat = true;
          i = j;
          while (isDigit(at(i))) ++i;
        }
      }
      // A number glued to letters (12abc) is one bad token.
      if (isIdChar(at(i)) && at(i) != '.') {
        i = idEnd(i);
        make(Tok::Error, i);
        return checkNumber();
      }
      return make(isFloat ? Tok::Float : Tok::Int, i);
    }
    if (isIdStart(c)) return make(Tok::Bare, idEnd(b));
    // Anything else: one (possibly multi-byte) character.
    size_t e = b + 1;
    if (static_cast<unsigned char>(c) >= 0xc0)
      while (e < end_ && (static_cast<unsigned char>(text_[e]) & 0xc0) == 0x80 && e < b + 4) ++e;
    make(Tok::Error, e);
    SourceRange r = tokRange();
    error(diag::err_ir_unexpected_char, r) << show(text_.substr(b, e - b));
  }
  void checkNumber() {
    if (tok_.kind == Tok::Error) {
      SourceRange r = tokRange();
      error(diag::err_ir_bad_number, r) << show(tok_.text);
    }
  }

  bool consume(Tok k) {
    if (tok_.kind != k) return false;
    lex();
    return true;
  }
  bool expect(Tok k, std::string_view what) {
    if (consume(k)) return true;
    expected(what);
    return false;
  }
  bool isBare(std::string_view s) const { return tok_.kind == Tok::Bare && tok_.text == s; }
  bool expectBare(std::string_view s) {
    if (isBare(s)) {
      lex();
      return true;
    }
    expected("'" + std::string(s) + "'");
    return false;
  }

  // Peeks at the token after the current one (and the one after that) without consuming.
  Token peek(unsigned n) {
    size_t savePos = pos_;
    Token t = tok_;
    // Lexing ahead must not report, so peek uses a quiet lexer over the simple tokens.
    for (unsigned i = 0; i < n && t.kind != Tok::Eof; ++i) t = quietLex();
    pos_ = savePos;
    return t;
  }
  // A lexer pass that never reports (used by peek): unknown bytes come back as Error tokens.
  Token quietLex() {
    size_t p = pos_;
    for (;;) {
      while (p < end_ && (text_[p] == ' ' || text_[p] == '\t' || text_[p] == '\n' || text_[p] == '\r')) ++p;
      if (p + 1 < end_ && text_[p] == '/' && text_[p + 1] == '/') {
        while (p < end_ && text_[p] != '\n') ++p;
        continue;
      }
      break;
    }
    Token t;
    t.begin = static_cast<uint32_t>(p);
    if (p >= end_) {
      t.kind = Tok::Eof;
      return t;
    }
    char c = text_[p];
    size_t e = p + 1;
    switch (c) {
      case '{': t.kind = Tok::LBrace; break;
      case '}': t.kind = Tok::RBrace; break;
      case '=': t.kind = Tok::Equal; break;
      case ',': t.kind = Tok::Comma; break;
      default:
        if (isIdStart(c)) {
          while (e < end_ && isIdChar(text_[e])) ++e;
          t.kind = Tok::Bare;
        } else {
          t.kind = Tok::Error;
        }
    }
    t.end = static_cast<uint32_t>(e);
    t.text = text_.substr(p, e - p);
    pos_ = e;
    return t;
  }

  // ---- numbers ----

  bool parseInt(int64_t& v) {
    if (tok_.kind != Tok::Int) {
      expected("an integer");
      return false;
    }
    auto r = std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), v);
    if (r.ec != std::errc() || r.ptr != tok_.text.data() + tok_.text.size()) {
      SourceRange rr = tokRange();
      error(diag::err_ir_bad_number, rr) << show(tok_.text);
      return false;
    }
    lex();
    return true;
  }

  bool parseFloatTok(double& v) {
    std::string_view s = tok_.text;
    if (s == "inf")
      v = INFINITY;
    else if (s == "-inf")
      v = -INFINITY;
    else if (s == "nan")
      v = NAN;
    else {
      auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
        SourceRange rr = tokRange();
        error(diag::err_ir_bad_number, rr) << show(s);
        return false;
      }
    }
    lex();
    return true;
  }

  // ---- types ----

  Type parseType() {
    if (failed_) return nullptr;
    if (tok_.kind == Tok::Bare) {
      ScalarKind k;
      if (!lookupScalar(tok_.text, k)) {
        SourceRange r = tokRange();
        error(diag::err_ir_unknown_type, r) << show(tok_.text);
        return nullptr;
      }
      lex();
      return ctx_->scalar(k);
    }
    if (tok_.kind != Tok::Bang) {
      expected("a type");
      return nullptr;
    }
    std::string_view name = tok_.text;
    SourceRange nameRange = tokRange();
    if (name == "!token") {
      lex();
      return ctx_->token();
    }
    if (name != "!num" && name != "!tensor" && name != "!smem" && name != "!tile" && name != "!frag" &&
        name != "!cgroup") {
      error(diag::err_ir_unknown_type, nameRange) << show(name);
      return nullptr;
    }
    lex();
    if (!expect(Tok::Less, "'<'")) return nullptr;
    Type result = nullptr;
    if (name == "!cgroup") {
      int64_t n;
      if (!parseInt(n)) return nullptr;
      result = ctx_->cgroup(n);
    } else if (name == "!num") {
      Type storage = parseScalar();
      if (!storage) return nullptr;
      Type accum = nullptr;
      Rounding round = Rounding::Default;
      bool saturate = false;
      double scale = 0;
      while (consume(Tok::Comma)) {
        if (isBare("accum")) {
          lex();
          if (!expect(Tok::Equal, "'='")) return nullptr;
          if (!(accum = parseScalar())) return nullptr;
        } else if (isBare("round")) {
          lex();
          if (!expect(Tok::Equal, "'='")) return nullptr;
          static const char* names[] = {"default", "nearest_even", "toward_zero", "stochastic"};
          int k = keyword(names, 4, "rounding mode");
          if (k < 0) return nullptr;
          round = static_cast<Rounding>(k);
        } else if (isBare("saturate")) {
          lex();
          saturate = true;
        } else if (isBare("scale")) {
          lex();
          if (!expect(Tok::Equal, "'='")) return nullptr;
          if (tok_.kind != Tok::Float) {
            expected("a float scale");
            return nullptr;
          }
          if (!parseFloatTok(scale)) return nullptr;
        } else {
          expected("'accum', 'round', 'saturate' or 'scale'");
          return nullptr;
        }
      }
      result = ctx_->num(storage, accum, round, saturate, scale);
    } else {
      Type elem = parseElementType();
      if (!elem || !expect(Tok::Comma, "','")) return nullptr;
      std::vector<Dim> shape;
      if (!parseShape(shape)) return nullptr;
      if (name == "!tile") {
        result = ctx_->tile(elem, std::move(shape));
      } else if (name == "!frag") {
        if (!expect(Tok::Comma, "','")) return nullptr;
        static const char* names[] = {"a", "b", "acc"};
        int k = keyword(names, 3, "fragment role");
        if (k < 0) return nullptr;
        result = ctx_->frag(elem, std::move(shape), static_cast<FragRole>(k));
      } else if (name == "!tensor") {
        if (!expect(Tok::Comma, "','")) return nullptr;
        static const char* spaces[] = {"global", "shared", "local"};
        int s = keyword(spaces, 3, "memory space");
        if (s < 0 || !expect(Tok::Comma, "','")) return nullptr;
        static const char* access[] = {"read", "write", "readwrite"};
        int a = keyword(access, 3, "access mode");
        if (a < 0) return nullptr;
        result = ctx_->tensor(elem, std::move(shape), static_cast<MemSpace>(s), static_cast<Access>(a));
      } else {  // !smem
        Layout layout = Layout::Row;
        Swizzle swizzle = Swizzle::None;
        while (consume(Tok::Comma)) {
          if (isBare("row") || isBare("col")) {
            layout = isBare("col") ? Layout::Col : Layout::Row;
            lex();
          } else if (isBare("swizzle")) {
            lex();
            if (!expect(Tok::Equal, "'='")) return nullptr;
            static const char* names[] = {"none", "xor", "xor32", "xor64", "xor128"};
            int k = keyword(names, 5, "swizzle");
            if (k < 0) return nullptr;
            swizzle = static_cast<Swizzle>(k);
          } else {
            expected("'row', 'col' or 'swizzle'");
            return nullptr;
          }
        }
        result = ctx_->smem(elem, std::move(shape), layout, swizzle);
      }
    }
    if (!expect(Tok::Greater, "'>'")) return nullptr;
    return result;
  }

  int keyword(const char* const* names, int n, const char* what) {
    if (tok_.kind == Tok::Bare)
      for (int i = 0; i < n; ++i)
        if (tok_.text == names[i]) {
          lex();
          return i;
        }
    if (tok_.kind == Tok::Bare) {
      SourceRange r = tokRange();
      error(diag::err_ir_bad_type_param, r) << what << show(tok_.text);
    } else {
      expected(std::string("a ") + what);
    }
    return -1;
  }

  Type parseScalar() {
    if (tok_.kind != Tok::Bare) {
      expected("a scalar type");
      return nullptr;
    }
    return parseType();
  }
  Type parseElementType() {
    if (tok_.kind == Tok::Bang && tok_.text == "!num") return parseType();
    return parseScalar();
  }

  bool parseShape(std::vector<Dim>& shape) {
    if (!expect(Tok::LBracket, "'['")) return false;
    if (consume(Tok::RBracket)) return true;
    do {
      Dim d;
      if (!parseDim(d, 0)) return false;
      shape.push_back(std::move(d));
    } while (consume(Tok::Comma));
    return expect(Tok::RBracket, "']'");
  }

  // An extent: `128`, `n`, `?`, or a derived extent `div(K, tp)` (add, sub, mul, div, mod).
  bool parseDim(Dim& d, unsigned depth) {
    if (tok_.kind == Tok::Int) {
      if (!parseInt(d.size)) return false;
      if (d.size < 0) {
        SourceRange r = range(tok_.begin, tok_.begin);
        error(diag::err_ir_bad_type_param, r) << "extent" << std::to_string(d.size);
        return false;
      }
      return true;
    }
    if (tok_.kind == Tok::Bare) {
      std::string name(tok_.text);
      SourceRange at = tokRange();
      lex();
      if (tok_.kind != Tok::LParen) {
        d.sym = std::move(name);
        return true;
      }
      static const DimOp ops[] = {DimOp::Add, DimOp::Sub, DimOp::Mul, DimOp::Div, DimOp::Mod};
      const DimOp* op = nullptr;
      for (const DimOp& o : ops)
        if (name == dimOpName(o)) op = &o;
      if (!op) {
        error(diag::err_ir_bad_type_param, at) << "extent operation" << name;
        return false;
      }
      if (depth >= kMaxNesting) {
        error(diag::err_ir_nesting_too_deep, at) << std::to_string(kMaxNesting);
        return false;
      }
      lex();
      Dim l, r;
      if (!parseDim(l, depth + 1) || !expect(Tok::Comma, "','") || !parseDim(r, depth + 1) ||
          !expect(Tok::RParen, "')'"))
        return false;
      d = Dim::derived(*op, l, r);
      return true;
    }
    if (!consume(Tok::Question)) {
      expected("an extent");
      return false;
    }
    return true;
  }

  // ---- attributes ----

  bool parseAttrValue(Attribute& a) {
    if (++depth_ > kMaxNesting) {
      SourceRange r = tokRange();
      error(diag::err_ir_nesting_too_deep, r) << std::to_string(kMaxNesting);
      return false;
    }
    struct Leave {
      unsigned& d;
      ~Leave() { --d; }
    } leave{depth_};
    switch (tok_.kind) {
      case Tok::Int: a.kind = AttrKind::Int; return parseInt(a.i);
      case Tok::Float: a.kind = AttrKind::Float; return parseFloatTok(a.f);
      case Tok::String: a.kind = AttrKind::String; return parseString(a.s);
      case Tok::At:
        a.kind = AttrKind::Symbol;
        a.s = std::string(tok_.text.substr(1));
        lex();
        return true;
      case Tok::LBracket:
        a.kind = AttrKind::Array;
        lex();
        if (consume(Tok::RBracket)) return true;
        do {
          Attribute e;
          if (!parseAttrValue(e)) return false;
          a.array.push_back(std::move(e));
        } while (consume(Tok::Comma));
        return expect(Tok::RBracket, "']'");
      case Tok::LBrace: {
        std::vector<NamedAttr> entries;
        if (!parseAttrDict(entries)) return false;
        a.kind = AttrKind::Dict;
        for (auto& e : entries) {
          a.keys.push_back(std::move(e.name));
          a.array.push_back(std::move(e.value));
        }
        return true;
      }
      case Tok::Bare:
        if (tok_.text == "unit") {
          a.kind = AttrKind::Unit;
          lex();
          return true;
        }
        if (tok_.text == "inf" || tok_.text == "nan") {
          a.kind = AttrKind::Float;
          return parseFloatTok(a.f);
        }
        [[fallthrough]];
      case Tok::Bang:
        a.kind = AttrKind::Type;
        a.type = parseType();
        return a.type != nullptr;
      default: expected("an attribute value"); return false;
    }
  }

  bool parseString(std::string& out) {
    std::string_view s = tok_.text.substr(1, tok_.text.size() - 2);
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\') {
        out += s[i];
        continue;
      }
      char e = i + 1 < s.size() ? s[i + 1] : '\0';
      auto hexv = [](char h) { return isDigit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : -1; };
      if (e == 'n')
        out += '\n', ++i;
      else if (e == 't')
        out += '\t', ++i;
      else if (e == '"' || e == '\\')
        out += e, ++i;
      else if (e == 'x' && i + 3 < s.size() + 0 && hexv(s[i + 2]) >= 0 && hexv(s[i + 3]) >= 0) {
        out += static_cast<char>(hexv(s[i + 2]) * 16 + hexv(s[i + 3]));
        i += 3;
      } else {
        SourceRange r = range(tok_.begin + 1 + static_cast<uint32_t>(i), tok_.begin + 3 + static_cast<uint32_t>(i));
        error(diag::err_ir_expected, r) << "a valid escape (\\n, \\t, \\\", \\\\, \\xNN)" << show(s.substr(i, 2));
        return false;
      }
    }
    lex();
    return true;
  }

  // `{` key [= value], ... `}`
  bool parseAttrDict(std::vector<NamedAttr>& attrs) {
    if (!expect(Tok::LBrace, "'{'")) return false;
    if (consume(Tok::RBrace)) return true;
    do {
      if (tok_.kind != Tok::Bare || tok_.text.find('.') != std::string_view::npos) {
        expected("an attribute name");
        return false;
      }
      std::string name(tok_.text);
      SourceRange nameRange = tokRange();
      lex();
      for (const NamedAttr& a : attrs)
        if (a.name == name) {
          error(diag::err_ir_duplicate_attr, nameRange) << name;
          return false;
        }
      Attribute value;
      if (consume(Tok::Equal) && !parseAttrValue(value)) return false;
      if (failed_) return false;
      attrs.push_back(NamedAttr::parsed(std::move(name), std::move(value)));
    } while (consume(Tok::Comma));
    return expect(Tok::RBrace, "'}'");
  }

  // True when the `{` at the current token opens an attribute dictionary (not a region).
  bool atAttrDict() {
    if (tok_.kind != Tok::LBrace) return false;
    Token t1 = peek(1);
    if (t1.kind != Tok::Bare || t1.text.find('.') != std::string_view::npos) return false;
    Token t2 = peek(2);
    return t2.kind == Tok::Equal || t2.kind == Tok::Comma || t2.kind == Tok::RBrace;
  }

  // ---- values ----

  bool defineValue(Value* v, const Token& t) {
    std::string name(t.text.substr(1));
    auto it = values_.find(name);
    if (it != values_.end()) {
      SourceRange r = range(t.begin, t.end);
      SourceRange prev = range(it->second.second, it->second.second + static_cast<uint32_t>(name.size()) + 1);
      error(diag::err_ir_redefined_value, r) << name;
      diags_.report(diag::note_ir_previous_def, prev);
      return false;
    }
    values_[name] = {v, t.begin};
    v->nameHint = name;
    return true;
  }

  Value* useValue() {
    if (tok_.kind != Tok::Percent) {
      expected("a value");
      return nullptr;
    }
    std::string name(tok_.text.substr(1));
    auto it = values_.find(name);
    if (it == values_.end()) {
      SourceRange r = tokRange();
      error(diag::err_ir_undefined_value, r) << name;
      return nullptr;
    }
    lex();
    return it->second.first;
  }

  // `(%a: T, %b: T)` into block arguments.
  bool parseArgList(Block& b) {
    if (!expect(Tok::LParen, "'('")) return false;
    if (consume(Tok::RParen)) return true;
    do {
      if (tok_.kind != Tok::Percent) {
        expected("an argument name");
        return false;
      }
      Token name = tok_;
      lex();
      if (!expect(Tok::Colon, "':'")) return false;
      Type t = parseType();
      if (!t) return false;
      if (!defineValue(b.addArg(t), name)) return false;
    } while (consume(Tok::Comma));
    return expect(Tok::RParen, "')'");
  }

  // ---- functions, regions, ops ----

  void parseFunc() {
    uint32_t start = tok_.begin;
    lex();  // tile.func
    if (tok_.kind != Tok::At) return expected("a function name '@name'");
    std::string name(tok_.text.substr(1));
    SourceRange nameRange = tokRange();
    auto prev = funcDefs_.find(name);
    if (prev != funcDefs_.end()) {
      error(diag::err_ir_redefined_func, nameRange) << name;
      diags_.report(diag::note_ir_previous_def, range(prev->second, prev->second + 1));
      return;
    }
    funcDefs_[name] = tok_.begin;
    lex();
    values_.clear();
    Builder b(*ctx_);
    b.setInsertionPointToEnd(module_->body());
    b.setLoc(sm_.locAt(file_, start));
    Operation* f = b.func(name, {}, {});
    if (!parseArgList(f->body())) return;
    std::vector<Attribute> results;
    if (consume(Tok::Arrow)) {
      if (consume(Tok::LParen)) {
        if (!consume(Tok::RParen)) {
          do {
            Type t = parseType();
            if (!t) return;
            results.push_back(Attribute::typeAttr(t));
          } while (consume(Tok::Comma));
          if (!expect(Tok::RParen, "')'")) return;
        }
      } else {
        Type t = parseType();
        if (!t) return;
        results.push_back(Attribute::typeAttr(t));
      }
    }
    f->setAttr(AttrId::ResultTypes, Attribute::arrayOf(std::move(results)));
    if (isBare("attributes")) {
      lex();
      std::vector<NamedAttr> attrs;
      if (!parseAttrDict(attrs)) return;
      for (auto& a : attrs) {
        if (a.name == attrName(AttrId::SymName) || a.name == attrName(AttrId::ResultTypes)) {
          error(diag::err_ir_duplicate_attr, nameRange) << a.name;
          return;
        }
        f->attrs.push_back(std::move(a));
      }
    }
    if (!expect(Tok::LBrace, "'{'")) return;
    parseOps(f->body());
    expect(Tok::RBrace, "'}'");
  }

  void parseOps(Block& block) {
    while (!failed_ && tok_.kind != Tok::RBrace && tok_.kind != Tok::Eof) parseOp(block);
  }

  void parseRegion(Region& region) {
    if (++depth_ > kMaxNesting) {
      SourceRange r = tokRange();
      error(diag::err_ir_nesting_too_deep, r) << std::to_string(kMaxNesting);
      return;
    }
    lex();  // {
    if (tok_.kind == Tok::Caret) {
      lex();
      if (!parseArgList(region.block())) return;
      if (!expect(Tok::Colon, "':'")) return;
    }
    parseOps(region.block());
    expect(Tok::RBrace, "'}'");
    --depth_;
  }

  void parseOp(Block& block) {
    std::vector<Token> resultNames;
    if (tok_.kind == Tok::Percent) {
      do {
        if (tok_.kind != Tok::Percent) return expected("a result name");
        resultNames.push_back(tok_);
        lex();
      } while (consume(Tok::Comma));
      if (!expect(Tok::Equal, "'='")) return;
    }
    if (tok_.kind != Tok::Bare) return expected("an operation name");
    OpId id;
    if (!lookupOp(tok_.text, id)) {
      SourceRange r = tokRange();
      error(diag::err_ir_unknown_op, r) << show(tok_.text);
      return;
    }
    if (id == OpId::TileFunc) {
      SourceRange r = tokRange();
      error(diag::err_ir_expected, r) << "an operation (functions are only allowed at the top level)"
                                      << "tile.func";
      return;
    }
    SourceRange nameRange = tokRange();
    lex();
    auto op = std::make_unique<Operation>(id);
    op->loc = nameRange.begin;
    // Operands start on the op's line (else `%x` is the next op's result).
    if (tok_.kind == Tok::Percent && !tok_.newlineBefore) {
      do {
        Value* v = useValue();
        if (!v) return;
        op->addOperand(v);
      } while (consume(Tok::Comma));
    }
    if (atAttrDict() && !parseAttrDict(op->attrs)) return;
    Operation* raw = block.push_back(std::move(op));
    while (!failed_ && tok_.kind == Tok::LBrace) {
      auto r = std::make_unique<Region>();
      r->parent = raw;
      raw->regions.push_back(std::move(r));
      parseRegion(*raw->regions.back());
    }
    if (failed_) return;
    std::vector<Type> types;
    if (consume(Tok::Colon)) {
      do {
        Type t = parseType();
        if (!t) return;
        types.push_back(t);
      } while (consume(Tok::Comma));
    }
    if (types.size() != resultNames.size()) {
      error(diag::err_ir_type_count, nameRange)
          << raw->name() << std::to_string(resultNames.size()) << std::to_string(types.size());
      return;
    }
    for (size_t i = 0; i < types.size(); ++i)
      if (!defineValue(raw->addResult(types[i]), resultNames[i])) return;
  }
};

}  // namespace

std::unique_ptr<Module> parseModule(const SourceManager& sm, FileID file, DiagnosticEngine& diags, uint32_t begin,
                                    uint32_t end) {
  Parser p(sm, file, diags, begin, end);
  return p.run();
}

}  // namespace tessera::ir

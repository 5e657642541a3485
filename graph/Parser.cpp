// Parser of the graph IR's textual form (grammar in docs/graph.md). Hand-written, one token of
// lookahead; the first error is reported at its exact location and parsing stops. Nesting of
// lists and dims is bounded, so no input exhausts the stack.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "graph/GraphDiagnostics.h"
#include "graph/Printer.h"

namespace tessera::graph {

namespace {

constexpr unsigned kMaxNesting = 64;

struct Token {
  enum Kind { End, Value, Symbol, Ident, Int, Float, String, Punct } kind = End;
  std::string text;  // without the sigil; for Punct the punctuation ("->" is one token)
  uint32_t offset = 0;
  int64_t i = 0;
  double f = 0;
};

class Lexer {
 public:
  // Lexes text[begin, end); offsets stay those of the whole buffer.
  Lexer(std::string_view text, size_t begin, size_t end) : s_(text.substr(0, std::min(end, text.size()))), p_(begin) {}
  bool next(Token& t, std::string& error) {
    skip();
    t = Token();
    t.offset = static_cast<uint32_t>(p_);
    if (p_ >= s_.size()) return true;
    char c = s_[p_];
    auto identChar = [&](char ch) { return isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.'; };
    if (c == '%' || c == '@') {
      size_t b = ++p_;
      while (p_ < s_.size() && identChar(s_[p_])) ++p_;
      if (p_ == b) {
        error = std::string("expected a name after '") + c + "'";
        return false;
      }
      t.kind = c == '%' ? Token::Value : Token::Symbol;
      afterOperand_ = true;
      t.text = std::string(s_.substr(b, p_ - b));
      return true;
    }
    if (isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t b = p_;
      while (p_ < s_.size() && identChar(s_[p_])) ++p_;
      afterOperand_ = true;
      t.kind = Token::Ident;
      t.text = std::string(s_.substr(b, p_ - b));
      return true;
    }
    // '-' starts a negative number only where an operand may start: `N-3` is a subtraction.
    bool sign = c == '-' && !afterOperand_ && p_ + 1 < s_.size() &&
                (isdigit(static_cast<unsigned char>(s_[p_ + 1])) || s_.substr(p_, 4) == "-inf");
    afterOperand_ = false;
    if (isdigit(static_cast<unsigned char>(c)) || sign) {
      afterOperand_ = true;
      return number(t, error);
    }
    if (c == '"') {
      afterOperand_ = true;
      return string(t, error);
    }
    if (c == '-' && p_ + 1 < s_.size() && s_[p_ + 1] == '>') {
      p_ += 2;
      t.kind = Token::Punct;
      t.text = "->";
      return true;
    }
    if (std::string_view("()[]{}<>,:=+-*/%").find(c) != std::string_view::npos) {
      afterOperand_ = c == ')' || c == ']';
      ++p_;
      t.kind = Token::Punct;
      t.text = std::string(1, c);
      return true;
    }
    error = std::string("unexpected character '") + c + "'";
    return false;
  }
  size_t pos() const { return p_; }

 private:
  void skip() {
    while (p_ < s_.size()) {
      if (isspace(static_cast<unsigned char>(s_[p_])))
        ++p_;
      else if (s_.substr(p_, 2) == "//") {
        while (p_ < s_.size() && s_[p_] != '\n') ++p_;
      } else
        break;
    }
  }
  bool number(Token& t, std::string& error) {
    size_t b = p_;
    if (s_[p_] == '-') ++p_;
    if (s_.substr(p_, 3) == "inf") {
      p_ += 3;
      t.kind = Token::Float;
      t.f = s_[b] == '-' ? -HUGE_VAL : HUGE_VAL;
      return true;
    }
    bool isFloat = false;
    while (p_ < s_.size() && (isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '.' ||
                              ((s_[p_] == '-' || s_[p_] == '+') && (s_[p_ - 1] == 'e' || s_[p_ - 1] == 'E')))) {
      if (s_[p_] == '.' || s_[p_] == 'e' || s_[p_] == 'E') isFloat = true;
      ++p_;
    }
    std::string text(s_.substr(b, p_ - b));
    char* end = nullptr;
    errno = 0;
    if (isFloat) {
      t.kind = Token::Float;
      t.f = std::strtod(text.c_str(), &end);
    } else {
      t.kind = Token::Int;
      t.i = std::strtoll(text.c_str(), &end, 10);
    }
    if (!end || *end != '\0' || errno == ERANGE) {
      error = "malformed number '" + text + "'";
      return false;
    }
    return true;
  }
  bool string(Token& t, std::string& error) {
    ++p_;
    t.kind = Token::String;
    while (p_ < s_.size() && s_[p_] != '"') {
      char c = s_[p_++];
      if (c == '\n') break;
      if (c != '\\') {
        t.text += c;
        continue;
      }
      if (p_ >= s_.size()) break;
      char e = s_[p_++];
      if (e == 'n')
        t.text += '\n';
      else if (e == 't')
        t.text += '\t';
      else if (e == 'x' && p_ + 2 <= s_.size() && isxdigit(static_cast<unsigned char>(s_[p_])) &&
               isxdigit(static_cast<unsigned char>(s_[p_ + 1]))) {
        t.text += static_cast<char>(std::strtol(std::string(s_.substr(p_, 2)).c_str(), nullptr, 16));
        p_ += 2;
      } else
        t.text += e;
    }
    if (p_ >= s_.size() || s_[p_] != '"') {
      error = "unterminated string";
      return false;
    }
    ++p_;
    return true;
  }
  std::string_view s_;
  size_t p_;
  bool afterOperand_ = false;  // the previous token ends an operand (a name, a number, ')' or ']')
};

class Parser {
 public:
  Parser(const SourceManager& sm, FileID file, DiagnosticEngine& diags, size_t begin, size_t end)
      : sm_(sm), file_(file), diags_(diags), lex_(sm.bufferText(file), begin, end) {}

  std::unique_ptr<GraphModule> parse() {
    auto m = std::make_unique<GraphModule>();
    m->name = std::string(sm_.bufferName(file_));
    if (!advance()) return nullptr;
    while (tok_.kind != Token::End) {
      auto g = func();
      if (!g) return nullptr;
      m->graphs.push_back(std::move(g));
    }
    return m;
  }

 private:
  bool fail(const std::string& message) {
    if (!failed_) diags_.report(diag::err_graph_parse, sm_.locAt(file_, tok_.offset)) << message;
    failed_ = true;
    return false;
  }
  // On a lexical error tok_ is the bad token, so the error points at its first character.
  bool advance() {
    std::string error;
    if (!lex_.next(tok_, error)) return fail(error);
    return true;
  }
  bool failAt(uint32_t offset, const std::string& message) {
    tok_.offset = offset;
    return fail(message);
  }
  bool isPunct(const char* p) const { return tok_.kind == Token::Punct && tok_.text == p; }
  bool isIdent(const char* p) const { return tok_.kind == Token::Ident && tok_.text == p; }
  bool expect(const char* p) {
    if (!isPunct(p)) return fail(std::string("expected '") + p + "'");
    return advance();
  }
  bool accept(const char* p) { return isPunct(p) ? advance() : false; }

  std::unique_ptr<Graph> func() {
    if (!isIdent("graph.func")) return fail("expected 'graph.func'"), nullptr;
    if (!advance()) return nullptr;
    if (tok_.kind != Token::Symbol) return fail("expected the function's name ('@name')"), nullptr;
    auto g = std::make_unique<Graph>();
    g->name = tok_.text;
    SourceLoc nameAt = sm_.locAt(file_, tok_.offset);
    g->loc = SourceRange(nameAt, SourceLoc{nameAt.offset + 1 + static_cast<uint32_t>(tok_.text.size())});
    values_.clear();
    if (!advance() || !expect("(")) return nullptr;
    while (!isPunct(")")) {
      if (!g->params.empty() && !expect(",")) return nullptr;
      if (tok_.kind != Token::Value) return fail("expected a parameter ('%name: type')"), nullptr;
      std::string n = tok_.text;
      uint32_t nameAt = tok_.offset;
      if (!advance() || !expect(":")) return nullptr;
      Access a = Access::Read;
      for (Access c : {Access::Write, Access::ReduceSum, Access::ReduceMax, Access::ReduceMin, Access::Read})
        if (isIdent(accessName(c))) {
          a = c;
          if (!advance()) return nullptr;
        }
      Type t;
      if (!type(t)) return nullptr;
      if (!define(n, nameAt, g->addParam(hint(n), t, a))) return nullptr;
    }
    if (!advance() || !expect("->") || !expect("(")) return nullptr;
    std::vector<Type> resultTypes;
    while (!isPunct(")")) {
      if (!resultTypes.empty() && !expect(",")) return nullptr;
      Type t;
      if (!type(t)) return nullptr;
      resultTypes.push_back(t);
    }
    if (!advance()) return nullptr;
    if (isIdent("attributes")) {
      if (!advance() || !attrDict(g->attrs)) return nullptr;
    }
    if (!expect("{")) return nullptr;
    while (!isIdent("graph.return")) {
      if (tok_.kind == Token::End) return fail("expected 'graph.return' before the end of the input"), nullptr;
      if (!node(*g)) return nullptr;
    }
    uint32_t returnAt = tok_.offset;
    if (!advance()) return nullptr;
    while (tok_.kind == Token::Value) {
      Value* v = use();
      if (!v) return nullptr;
      g->results.push_back(v);
      if (!isPunct(",")) break;
      if (!advance()) return nullptr;
    }
    if (g->results.size() != resultTypes.size())
      return failAt(returnAt, "graph.return returns " + std::to_string(g->results.size()) +
                                  " values, but the signature has " + std::to_string(resultTypes.size())),
             nullptr;
    if (!expect("}")) return nullptr;
    return g;
  }

  static std::string hint(const std::string& n) { return isdigit(static_cast<unsigned char>(n[0])) ? "" : n; }

  bool define(const std::string& n, uint32_t at, Value* v) {
    if (!values_.emplace(n, v).second) return failAt(at, "'%" + n + "' is defined twice");
    return true;
  }
  Value* use() {
    auto it = values_.find(tok_.text);
    if (it == values_.end()) return fail("use of undefined value '%" + tok_.text + "'"), nullptr;
    Value* v = it->second;
    return advance() ? v : nullptr;
  }

  bool node(Graph& g) {
    std::vector<std::string> names;
    std::vector<uint32_t> nameAt;
    while (tok_.kind == Token::Value) {
      names.push_back(tok_.text);
      nameAt.push_back(tok_.offset);
      if (!advance()) return false;
      if (isPunct("=")) break;
      if (!expect(",")) return false;
    }
    if (!names.empty() && !expect("=")) return false;
    if (tok_.kind != Token::Ident) return fail("expected an op name");
    OpId op;
    if (!lookupOp(tok_.text, op)) return fail("unknown op '" + tok_.text + "'");
    SourceLoc at = sm_.locAt(file_, tok_.offset);
    if (!advance()) return false;
    std::vector<Value*> operands;
    while (tok_.kind == Token::Value) {
      Value* v = use();
      if (!v) return false;
      operands.push_back(v);
      if (!isPunct(",")) break;
      if (!advance()) return false;
    }
    Attrs attrs;
    if (isPunct("{") && !attrDict(attrs)) return false;
    std::vector<Type> types;
    if (!names.empty()) {
      if (!expect(":")) return false;
      for (size_t i = 0; i < names.size(); ++i) {
        if (i && !expect(",")) return false;
        Type t;
        if (!type(t)) return false;
        types.push_back(t);
      }
    }
    Node* n = g.create(op, operands, types, std::move(attrs),
                       SourceRange(at, SourceLoc{at.offset + static_cast<uint32_t>(std::strlen(opInfo(op).name))}));
    for (size_t i = 0; i < names.size(); ++i) {
      n->result(i)->name = hint(names[i]);
      if (!define(names[i], nameAt[i], n->result(i))) return false;
    }
    return true;
  }

  bool type(Type& t) {
    if (tok_.kind != Token::Ident) return fail("expected a type");
    if (tok_.text != "tensor") {
      auto d = lookupDType(tok_.text);
      if (!d) return fail("unknown dtype '" + tok_.text + "'");
      t = Type::scalar(*d);
      return advance();
    }
    if (!advance() || !expect("<")) return false;
    if (tok_.kind != Token::Ident) return fail("expected a dtype");
    auto d = lookupDType(tok_.text);
    if (!d) return fail("unknown dtype '" + tok_.text + "'");
    if (!advance() || !expect(",") || !expect("[")) return false;
    Shape s;
    while (!isPunct("]")) {
      if (!s.empty() && !expect(",")) return false;
      Dim dim;
      if (!dimExpr(dim, 0)) return false;
      s.push_back(dim);
    }
    if (!advance() || !expect(">")) return false;
    t = Type::tensor(*d, s);
    return true;
  }

  // dim := term (('+'|'-') term)*; term := factor (('*'|'/'|'%') factor)*;
  // factor := int | name | 'ceil_div' '(' dim ',' dim ')' | '(' dim ')'
  bool dimExpr(Dim& out, unsigned depth) {
    if (depth > kMaxNesting) return fail("extent nested too deeply");
    if (!dimTerm(out, depth)) return false;
    while (isPunct("+") || isPunct("-")) {
      Dim::Op op = isPunct("+") ? Dim::Op::Add : Dim::Op::Sub;
      Dim r;
      if (!advance() || !dimTerm(r, depth)) return false;
      out = Dim::binary(op, out, r);
    }
    return true;
  }
  bool dimTerm(Dim& out, unsigned depth) {
    if (!dimFactor(out, depth)) return false;
    while (isPunct("*") || isPunct("/") || isPunct("%")) {
      Dim::Op op = isPunct("*") ? Dim::Op::Mul : isPunct("/") ? Dim::Op::Div : Dim::Op::Mod;
      Dim r;
      if (!advance() || !dimFactor(r, depth)) return false;
      out = Dim::binary(op, out, r);
    }
    return true;
  }
  bool dimFactor(Dim& out, unsigned depth) {
    if (tok_.kind == Token::Int) {
      out = Dim::constant(tok_.i);
      return advance();
    }
    if (isIdent("ceil_div")) {
      Dim a, b;
      if (!advance() || !expect("(") || !dimExpr(a, depth + 1) || !expect(",") || !dimExpr(b, depth + 1) ||
          !expect(")"))
        return false;
      out = Dim::binary(Dim::Op::CeilDiv, a, b);
      return true;
    }
    if (tok_.kind == Token::Ident) {
      out = Dim::symbol(tok_.text);
      return advance();
    }
    if (isPunct("(")) {
      return advance() && dimExpr(out, depth + 1) && expect(")");
    }
    return fail("expected an extent (an integer, a symbol or an expression)");
  }

  bool attrDict(Attrs& attrs) {
    if (!expect("{")) return false;
    while (!isPunct("}")) {
      if (!attrs.empty() && !expect(",")) return false;
      if (tok_.kind != Token::Ident) return fail("expected an attribute name");
      std::string k = tok_.text;
      if (attrs.hasNamed(k)) return fail("attribute '" + k + "' is given twice");
      if (!advance()) return false;
      if (!isPunct("=")) {
        attrs.setNamed(k, Attr::b(true));
        continue;
      }
      Attr v;
      if (!advance() || !attrValue(v, 0)) return false;
      attrs.setNamed(k, std::move(v));
    }
    return advance();
  }

  bool attrValue(Attr& out, unsigned depth) {
    if (depth > kMaxNesting) return fail("attribute nested too deeply");
    switch (tok_.kind) {
      case Token::Int: out = Attr::i(tok_.i); return advance();
      case Token::Float: out = Attr::f(tok_.f); return advance();
      case Token::String: out = Attr::s(tok_.text); return advance();
      case Token::Symbol: out = Attr::symbolRef(tok_.text); return advance();
      case Token::Ident:
        if (tok_.text == "true" || tok_.text == "false") {
          out = Attr::b(tok_.text == "true");
          return advance();
        }
        if (tok_.text == "nan") {
          out = Attr::f(std::nan(""));
          return advance();
        }
        if (tok_.text == "inf") {
          out = Attr::f(HUGE_VAL);
          return advance();
        }
        break;
      case Token::Punct:
        if (tok_.text == "[") {
          AttrList l;
          if (!advance()) return false;
          while (!isPunct("]")) {
            if (!l.empty() && !expect(",")) return false;
            Attr a;
            if (!attrValue(a, depth + 1)) return false;
            l.push_back(std::move(a));
          }
          out = Attr::list(std::move(l));
          return advance();
        }
        break;
      default: break;
    }
    return fail("expected an attribute value");
  }

  const SourceManager& sm_;
  FileID file_;
  DiagnosticEngine& diags_;
  Lexer lex_;
  Token tok_;
  bool failed_ = false;
  std::map<std::string, Value*> values_;
};

}  // namespace

std::unique_ptr<GraphModule> parseModule(const SourceManager& sm, FileID file, DiagnosticEngine& diags, size_t begin,
                                         size_t end) {
  Parser p(sm, file, diags, begin, end);
  return p.parse();
}

Dim parseDimSpelling(const std::string& text, bool& ok) {
  // A private SourceManager: dims in attributes are re-read from their canonical spelling.
  SourceManager sm;
  FileID f = sm.addBuffer("<dim>", "graph.func @d(%x: tensor<f32, [" + text + "]>) -> () {\n graph.return\n}\n");
  DiagnosticEngine diags(sm);
  auto m = parseModule(sm, f, diags);
  ok = m && !diags.hasErrors() && m->graphs.size() == 1 && m->graphs[0]->params.size() == 1 &&
       m->graphs[0]->params[0].value->type.shape.size() == 1;
  return ok ? m->graphs[0]->params[0].value->type.shape[0] : Dim::constant(0);
}

}  // namespace tessera::graph

#include "codegen/lower/CostExpr.h"

#include <cctype>

namespace tessera::codegen {

namespace {

class Parser {
 public:
  Parser(const std::string& s, const std::vector<std::string>& symbols, std::string& unknown)
      : s_(s), symbols_(symbols), unknown_(unknown) {}

  bool parse(std::vector<ExtentOp>& out) {
    if (!sum(out)) return false;
    skip();
    return pos_ == s_.size();
  }

 private:
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool at(char c) {
    skip();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool sum(std::vector<ExtentOp>& out) {
    if (!product(out)) return false;
    while (at('+') || at('-')) {
      char op = s_[pos_++];
      if (!product(out)) return false;
      out.push_back({op == '+' ? ExtentOp::Add : ExtentOp::Sub, 0, 0});
    }
    return true;
  }
  bool product(std::vector<ExtentOp>& out) {
    if (!atom(out)) return false;
    while (at('*') || at('/') || at('%')) {
      char op = s_[pos_++];
      if (op == '*' && pos_ < s_.size() && s_[pos_] == '*') return false;  // no powers
      if (op == '/' && pos_ < s_.size() && s_[pos_] == '/') ++pos_;
      if (!atom(out)) return false;
      out.push_back({op == '*' ? ExtentOp::Mul : op == '/' ? ExtentOp::Div : ExtentOp::Mod, 0, 0});
    }
    return true;
  }
  bool atom(std::vector<ExtentOp>& out) {
    skip();
    if (pos_ >= s_.size()) return false;
    if (s_[pos_] == '(') {
      ++pos_;
      if (!sum(out) || !at(')')) return false;
      ++pos_;
      return true;
    }
    if (isdigit(static_cast<unsigned char>(s_[pos_]))) {
      int64_t v = 0;
      while (pos_ < s_.size() && isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (v > (INT64_MAX - 9) / 10) return false;
        v = v * 10 + (s_[pos_++] - '0');
      }
      out.push_back({ExtentOp::Const, 0, v});
      return true;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && (isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (start == pos_) return false;
    std::string name = s_.substr(start, pos_ - start);
    for (size_t i = 0; i < symbols_.size(); ++i)
      if (symbols_[i] == name) {
        out.push_back({ExtentOp::Symbol, static_cast<int32_t>(i), 0});
        return true;
      }
    unknown_ = name;
    return false;
  }

  const std::string& s_;
  const std::vector<std::string>& symbols_;
  std::string& unknown_;
  size_t pos_ = 0;
};

}  // namespace

bool parseCostExpression(const std::string& text, const std::vector<std::string>& symbols, std::vector<ExtentOp>& out,
                         std::string& unknown) {
  unknown.clear();
  out.clear();
  return Parser(text, symbols, unknown).parse(out);
}

}  // namespace tessera::codegen

// Semantic tokens (full document): the lexer gives comments, strings, numbers, keywords and
// operators; identifiers take their meaning from the AST (declarations, attributes, decorators)
// and, with sema, from NameExpr::symbol (parameter, variable, function, builtin, dtype, shape
// symbol, namespace).
#include <map>

#include "lsp/ASTWalk.h"
#include "lsp/BuiltinDocs.h"
#include "lsp/Features.h"

namespace tessera::lsp {

namespace {
enum TokType {
  tNamespace,
  tType,
  tFunction,
  tParameter,
  tVariable,
  tProperty,
  tKeyword,
  tComment,
  tString,
  tNumber,
  tOperator,
  tDecorator,
  tTypeParameter
};
enum TokMod { mDeclaration = 1, mReadonly = 2, mDefaultLibrary = 4 };

struct Kind {
  int type;
  int mods = 0;
};

bool isOperatorToken(TokenKind k) {
  switch (k) {
#define PUNCT(NAME, SPELLING) case TokenKind::NAME:
#include "frontend/TokenKinds.def"
    return !(k == TokenKind::l_paren || k == TokenKind::r_paren || k == TokenKind::l_square ||
             k == TokenKind::r_square || k == TokenKind::l_brace || k == TokenKind::r_brace || k == TokenKind::comma ||
             k == TokenKind::colon || k == TokenKind::semi || k == TokenKind::period || k == TokenKind::at ||
             k == TokenKind::ellipsis);
    default: return false;
  }
}

std::optional<Kind> fromSymbol(const Symbol* s) {
  if (!s) return std::nullopt;
  switch (s->kind) {
    case SymbolKind::Variable: return Kind{tVariable};
    case SymbolKind::Parameter: return Kind{tParameter};
    case SymbolKind::Function: return Kind{tFunction};
    case SymbolKind::Builtin: return Kind{tFunction, mDefaultLibrary};
    case SymbolKind::Namespace: return Kind{tNamespace, mDefaultLibrary};
    case SymbolKind::Module: return Kind{tNamespace};
    case SymbolKind::DType: return Kind{tType, mDefaultLibrary};
    case SymbolKind::ShapeSymbol: return Kind{tTypeParameter};
    case SymbolKind::Constant: return Kind{tVariable, mReadonly};
    case SymbolKind::AutotuneParam: return Kind{tVariable, mReadonly};
  }
  return std::nullopt;
}
std::optional<Kind> fromType(const Type* t) {
  if (!t) return std::nullopt;
  switch (t->kind) {
    case TypeKind::Builtin: return Kind{tFunction, mDefaultLibrary};
    case TypeKind::Namespace: return Kind{tNamespace, mDefaultLibrary};
    case TypeKind::Module: return Kind{tNamespace};
    case TypeKind::DTypeValue: return Kind{tType, mDefaultLibrary};
    case TypeKind::Function: return Kind{tFunction};
    default: return std::nullopt;
  }
}

// Classification of identifier tokens by their start offset (absolute).
std::map<uint32_t, Kind> classifyNames(const Analysis& a) {
  std::map<uint32_t, Kind> out;
  if (!a.module) return out;
  walk(*a.module, [&](const Node* n) {
    if (auto* f = dyn_cast<FunctionDefStmt>(n)) {
      out[f->nameRange.begin.offset] = {tFunction, mDeclaration};
      for (const Param& p : f->params)
        if (!p.name.empty()) out[p.nameRange.begin.offset] = {tParameter, mDeclaration};
      for (const Decorator& d : f->decorators) {
        // The decorator's name (`kernel`, `kernel.autotune`) reads as a decorator.
        const Expr* e = d.expr;
        if (auto* c = dyn_cast<CallExpr>(e)) e = c->callee;
        while (auto* at = dyn_cast<AttributeExpr>(e)) {
          out[at->nameRange.begin.offset] = {tDecorator};
          e = at->base;
        }
        if (auto* nm = dyn_cast<NameExpr>(e)) out[nm->range.begin.offset] = {tDecorator};
        // Clauses: `tile[(128,)]`, `shared(8_KiB)`.
        for (const Expr* c : d.clauses) {
          if (auto* call = dyn_cast<CallExpr>(c))
            c = call->callee;
          else if (auto* sub = dyn_cast<SubscriptExpr>(c))
            c = sub->base;
          if (auto* cn = dyn_cast<NameExpr>(c)) out[cn->range.begin.offset] = {tDecorator};
        }
      }
    } else if (auto* at = dyn_cast<AttributeExpr>(n)) {
      Kind k{tProperty};
      if (auto t = fromType(at->type)) k = *t;
      out.emplace(at->nameRange.begin.offset, k);
    } else if (auto* nm = dyn_cast<NameExpr>(n)) {
      Kind k{tVariable};
      if (auto s = fromSymbol(nm->symbol))
        k = *s;
      else if (lookupDType(nm->name))
        k = Kind{tType, mDefaultLibrary};  // annotations: f32, bf16
      else if (lookupPolicy(nm->name))
        k = Kind{tDecorator, mDefaultLibrary};  // @accum(...)
      if (nm->symbol && nm->symbol->declRange.begin == nm->range.begin) k.mods |= mDeclaration;
      out.emplace(nm->range.begin.offset, k);
    }
    return true;
  });
  return out;
}

class Encoder {
 public:
  explicit Encoder(const Analysis& a) : a_(a) {}
  // Adds a token covering [b, e) (buffer offsets), split at line ends.
  void add(uint32_t b, uint32_t e, Kind k) {
    while (b < e) {
      Position p = a_.lines.position(b);
      std::string_view line = a_.lines.lineText(p.line);
      uint32_t lineStart = b - static_cast<uint32_t>(utf8PrefixForUTF16(line, p.character));
      uint32_t lineEnd = lineStart + static_cast<uint32_t>(line.size());
      uint32_t segEnd = std::min(e, lineEnd);
      if (segEnd > b) {
        uint32_t len = utf16Length(a_.text().substr(b, segEnd - b));
        uint32_t dl = p.line - line_, dc = dl == 0 ? p.character - col_ : p.character;
        data_.insert(data_.end(), {dl, dc, len, static_cast<uint32_t>(k.type), static_cast<uint32_t>(k.mods)});
        line_ = p.line;
        col_ = p.character;
      }
      // Continue on the next line.
      size_t nl = a_.text().find('\n', segEnd);
      if (nl == std::string_view::npos || nl >= e) break;
      b = static_cast<uint32_t>(nl + 1);
    }
  }
  json result() const { return json{{"data", data_}}; }

 private:
  const Analysis& a_;
  std::vector<uint32_t> data_;
  uint32_t line_ = 0, col_ = 0;
};
}  // namespace

json semanticTokensLegend() {
  return json{{"tokenTypes",
               {"namespace", "type", "function", "parameter", "variable", "property", "keyword", "comment", "string",
                "number", "operator", "decorator", "typeParameter"}},
              {"tokenModifiers", {"declaration", "readonly", "defaultLibrary"}}};
}

json semanticTokens(const Analysis& a) {
  std::map<uint32_t, Kind> names = classifyNames(a);
  Encoder enc(a);
  for (size_t i = 0; i < a.tokens.size(); ++i) {
    const Token& t = a.tokens[i];
    if (t.text.empty()) continue;
    uint32_t b = a.offsetOf(t.range.begin), e = a.offsetOf(t.range.end);
    std::optional<Kind> k;
    auto it = names.find(t.range.begin.offset);
    if (it != names.end() && (t.kind == TokenKind::Identifier || isKeyword(t.kind))) {
      k = it->second;
    } else if (t.kind == TokenKind::at && i + 1 < a.tokens.size() && names.count(a.tokens[i + 1].range.begin.offset) &&
               names[a.tokens[i + 1].range.begin.offset].type == tDecorator) {
      k = Kind{tDecorator};
    } else {
      switch (t.kind) {
        case TokenKind::Comment: k = Kind{tComment}; break;
        case TokenKind::StringLiteral:
        case TokenKind::FStringLiteral: k = Kind{tString}; break;
        case TokenKind::IntLiteral:
        case TokenKind::FloatLiteral: k = Kind{tNumber}; break;
        case TokenKind::Identifier: k = Kind{tVariable}; break;
        default:
          if (isKeyword(t.kind))
            k = Kind{tKeyword};
          else if (isOperatorToken(t.kind))
            k = Kind{tOperator};
      }
    }
    if (k) enc.add(b, e, *k);
  }
  return enc.result();
}

}  // namespace tessera::lsp

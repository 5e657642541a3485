// The Tile IR printer. Values print as their name hint (%x) when they have one that is free in
// the function, else as numbers in definition order, so printing is deterministic and
// parse(print(m)) prints the same text.
#include <set>
#include <sstream>

#include "ir/AsmFormat.h"

namespace tessera::ir {

namespace {

bool validNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

class Printer {
 public:
  explicit Printer(std::string& out) : out_(out) {}

  void module(const Module& m) {
    bool first = true;
    for (const auto& op : m.body().ops) {
      if (!first) out_ += '\n';
      first = false;
      names_.clear();
      used_.clear();
      next_ = 0;
      if (op->id == OpId::TileFunc)
        func(*op);
      else
        operation(*op, 0);
    }
  }

  void standalone(const Operation& op) {
    if (op.id == OpId::TileFunc)
      func(op);
    else
      operation(op, 0);
  }

 private:
  std::string& out_;
  std::unordered_map<const Value*, std::string> names_;
  std::set<std::string> used_;
  unsigned next_ = 0;

  const std::string& define(const Value* v) {
    std::string name;
    bool numeric = !v->nameHint.empty();
    for (char c : v->nameHint) numeric = numeric && c >= '0' && c <= '9';
    if (!v->nameHint.empty() && !numeric) {
      std::string base;
      for (char c : v->nameHint) base += validNameChar(c) ? c : '_';
      name = base;
      for (unsigned k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    } else {
      do name = std::to_string(next_++);
      while (used_.count(name));
    }
    used_.insert(name);
    return names_[v] = "%" + name;
  }

  void use(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end())
      out_ += it->second;
    else
      out_ += "%<<undefined>>";
  }

  void indent(unsigned n) { out_.append(n, ' '); }

  void attrDict(const Operation& op, bool skipFuncAttrs) {
    bool any = false;
    for (const NamedAttr& a : op.attrs) {
      if (skipFuncAttrs && (a.name == attrName(AttrId::SymName) || a.name == attrName(AttrId::ResultTypes))) continue;
      out_ += any ? ", " : "{";
      any = true;
      out_ += a.name;
      if (a.value.kind != AttrKind::Unit) {
        out_ += " = ";
        out_ += printAttribute(a.value);
      }
    }
    if (any) out_ += '}';
  }

  void typeList(const std::vector<Type>& ts) {
    for (size_t i = 0; i < ts.size(); ++i) {
      if (i) out_ += ", ";
      out_ += printType(ts[i]);
    }
  }

  void func(const Operation& op) {
    out_ += "tile.func @";
    out_ += op.funcName();
    out_ += '(';
    static const Block kEmpty;
    const Block& b = op.regions.empty() ? kEmpty : op.regions[0]->block();
    for (size_t i = 0; i < b.args.size(); ++i) {
      if (i) out_ += ", ";
      out_ += define(b.args[i].get());
      out_ += ": ";
      out_ += printType(b.args[i]->type);
    }
    out_ += ')';
    std::vector<Type> rs = op.funcResultTypes();
    if (rs.size() == 1) {
      out_ += " -> ";
      out_ += printType(rs[0]);
    } else if (rs.size() > 1) {
      out_ += " -> (";
      typeList(rs);
      out_ += ')';
    }
    bool hasOther = false;
    for (const NamedAttr& a : op.attrs)
      hasOther |= a.name != attrName(AttrId::SymName) && a.name != attrName(AttrId::ResultTypes);
    if (hasOther) {
      out_ += " attributes ";
      attrDict(op, true);
    }
    out_ += " {\n";
    for (const auto& inner : b.ops) operation(*inner, 2);
    out_ += "}\n";
  }

  void operation(const Operation& op, unsigned ind) {
    indent(ind);
    if (!op.results.empty()) {
      for (size_t i = 0; i < op.results.size(); ++i) {
        if (i) out_ += ", ";
        out_ += define(op.results[i].get());
      }
      out_ += " = ";
    }
    out_ += op.name();
    for (size_t i = 0; i < op.operands.size(); ++i) {
      out_ += i ? ", " : " ";
      use(op.operands[i]);
    }
    if (!op.attrs.empty()) {
      out_ += ' ';
      attrDict(op, false);
    }
    for (const auto& r : op.regions) {
      out_ += " {\n";
      const Block& b = r->block();
      if (!b.args.empty()) {
        indent(ind);
        out_ += "^bb0(";
        for (size_t i = 0; i < b.args.size(); ++i) {
          if (i) out_ += ", ";
          out_ += define(b.args[i].get());
          out_ += ": ";
          out_ += printType(b.args[i]->type);
        }
        out_ += "):\n";
      }
      for (const auto& inner : b.ops) operation(*inner, ind + 2);
      indent(ind);
      out_ += '}';
    }
    if (!op.results.empty()) {
      out_ += " : ";
      for (size_t i = 0; i < op.results.size(); ++i) {
        if (i) out_ += ", ";
        out_ += printType(op.results[i]->type);
      }
    }
    out_ += '\n';
  }
};

}  // namespace

std::string printModule(const Module& m) {
  std::string out;
  Printer(out).module(m);
  return out;
}

std::string printOp(const Operation& op) {
  std::string out;
  Printer(out).standalone(op);
  return out;
}

}  // namespace tessera::ir

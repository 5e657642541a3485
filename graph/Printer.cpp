// The textual form of the graph IR (docs/graph.md):
//
//   graph.func @attention(%Q: tensor<f32, [S, D]>, %Y: write tensor<f32, [S, D]>, %eps: f32)
//       -> (tensor<f32, [S, D]>) attributes {jit, module = "attention"} {
//     %S = graph.matmul %Q, %K {transpose_b} : tensor<f32, [S, T]>
//     graph.store %Y, %S
//     graph.return %S
//   }
//
// Values print with their name hint (made unique with _1, _2, ...) or a number. The output is
// canonical: parse(print(g)) prints the same text.
#include "graph/Printer.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <unordered_map>

namespace tessera::graph {

std::string formatFloat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c >= 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

void printAttrValue(std::ostream& os, const Attr& a) {
  if (a.isInt())
    os << a.asInt();
  else if (a.isFloat())
    os << formatFloat(a.asFloat());
  else if (a.isBool())
    os << (a.asBool() ? "true" : "false");
  else if (a.isStr())
    os << (a.ref ? "@" + a.asStr() : quote(a.asStr()));
  else {
    os << "[";
    const AttrList& l = a.asList();
    for (size_t i = 0; i < l.size(); ++i) {
      if (i) os << ", ";
      printAttrValue(os, l[i]);
    }
    os << "]";
  }
}

class Namer {
 public:
  std::string operator()(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string base = v->name.empty() ? std::to_string(next_++) : v->name;
    std::string n = base;
    for (unsigned k = 1; used_.count(n); ++k) n = base + "_" + std::to_string(k);
    used_.insert(n);
    names_[v] = "%" + n;
    return names_[v];
  }

 private:
  std::unordered_map<const Value*, std::string> names_;
  std::set<std::string> used_;
  unsigned next_ = 0;
};

}  // namespace

std::string printAttrs(const Attrs& attrs) {
  if (attrs.empty()) return "";
  std::ostringstream os;
  os << "{";
  bool first = true;
  for (const auto& [k, v] : attrs.items()) {
    if (!first) os << ", ";
    first = false;
    os << k;
    if (v.isBool() && v.asBool()) continue;  // unit attribute
    os << " = ";
    printAttrValue(os, v);
  }
  os << "}";
  return os.str();
}

std::string printGraph(const Graph& g) {
  std::ostringstream os;
  Namer name;
  // Parameters first so that they get the hints they were written with.
  os << "graph.func @" << g.name << "(";
  for (size_t i = 0; i < g.params.size(); ++i) {
    const Param& p = g.params[i];
    os << (i ? ", " : "") << name(p.value.get()) << ": ";
    if (p.access != Access::Read) os << accessName(p.access) << " ";
    os << p.value->type.str();
  }
  os << ") -> (";
  for (size_t i = 0; i < g.results.size(); ++i) os << (i ? ", " : "") << g.results[i]->type.str();
  os << ")";
  if (!g.attrs.empty()) os << " attributes " << printAttrs(g.attrs);
  os << " {\n";
  for (const auto& n : g.nodes) {
    os << "  ";
    for (size_t i = 0; i < n->results.size(); ++i) os << (i ? ", " : "") << name(n->result(i));
    if (!n->results.empty()) os << " = ";
    os << n->info().name;
    for (size_t i = 0; i < n->operands.size(); ++i) os << (i ? ", " : " ") << name(n->operands[i]);
    if (!n->attrs.empty()) os << " " << printAttrs(n->attrs);
    for (size_t i = 0; i < n->results.size(); ++i) os << (i ? ", " : " : ") << n->result(i)->type.str();
    os << "\n";
  }
  os << "  graph.return";
  for (size_t i = 0; i < g.results.size(); ++i) os << (i ? ", " : " ") << name(g.results[i]);
  os << "\n}\n";
  return os.str();
}

std::string printModule(const GraphModule& m) {
  std::string out;
  for (size_t i = 0; i < m.graphs.size(); ++i) {
    if (i) out += "\n";
    out += printGraph(*m.graphs[i]);
  }
  return out;
}

}  // namespace tessera::graph

#include "lsp/BuiltinDocs.h"

namespace tessera::lsp {

std::string_view stripTesseraPrefix(std::string_view name) {
  for (std::string_view p : {"tessera.", "ts."})
    if (name.substr(0, p.size()) == p) return name.substr(p.size());
  return name;
}

std::string builtinLabel(const BuiltinInfo& b) {
  std::string sig = b.signatureText;
  if (!sig.empty() && sig[0] == '=') return std::string(b.name) + ":" + sig.substr(1);
  return std::string(b.name) + sig;
}

std::string builtinMarkdown(const BuiltinInfo& b) {
  std::string s = "```tessera\n" + builtinLabel(b) + "\n```\n" + b.doc;
  if (!b.aliases.empty()) {
    s += "\n\nAlso spelled: ";
    for (size_t i = 0; i < b.aliases.size(); ++i) s += (i ? ", `" : "`") + b.aliases[i] + "`";
  }
  s += "\n\nAllowed in: ";
  s += b.context == BuiltinContext::Kernel ? "kernels"
       : b.context == BuiltinContext::Host ? "host code"
                                           : "kernels and host code";
  if (b.effects) s += "  \nEffects: " + effectNames(b.effects);
  return s;
}

std::string dtypeMarkdown(DType d, std::string_view spelling) {
  const DTypeInfo& i = dtypeInfo(d);
  std::string s = "```tessera\n(dtype) " + std::string(spelling);
  if (spelling != i.name) s += " = " + std::string(i.name);
  s += "\n```\n" + std::string(i.doc) + "  \n" + std::to_string(i.bits) + " bits";
  if (i.kind == DTypeKind::Float)
    s += ", " + std::to_string(i.exponentBits) + " exponent and " + std::to_string(i.mantissaBits) + " mantissa bits";
  return s;
}

std::string policyMarkdown(const PolicyInfo& p) {
  std::string s = "```tessera\n@" + std::string(p.name);
  if (p.maxArgs > 0) s += "(" + std::string(p.argument) + ")";
  return s + "\n```\n(numeric policy) " + p.doc;
}

std::vector<std::string> builtinParamLabels(const BuiltinInfo& b) {
  std::vector<std::string> out;
  for (const BuiltinParam& p : b.sig.params) {
    std::string l = (p.variadic ? "*" : "") + p.name + ": " + p.kind;
    if (p.optional) l += " = ?";
    out.push_back(l);
  }
  return out;
}

}  // namespace tessera::lsp

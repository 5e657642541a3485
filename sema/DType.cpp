#include "sema/DType.h"

#include <algorithm>
#include <cctype>

namespace tessera {

namespace {
const DTypeInfo kDTypes[] = {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  {DType::ID, NAME, SHORT, BITS, DTypeKind::KIND, EXP, MANT, DOC},
#include "basic/DTypes.def"
};
struct Alias {
  const char* name;
  DType id;
};
const Alias kAliases[] = {
#define DTYPE_ALIAS(ALIAS, ID) {ALIAS, DType::ID},
#include "basic/DTypes.def"
};
struct MathMode {
  const char* name;
  const char* doc;
};
const MathMode kMathModes[] = {
#define DTYPE_MATH_MODE(NAME, DOC) {NAME, DOC},
#include "basic/DTypes.def"
};
const PolicyInfo kPolicies[] = {
#define POLICY(ID, NAME, ARG, MINARGS, MAXARGS, DOC) {Policy::ID, NAME, ARG, MINARGS, MAXARGS, DOC},
#include "basic/DTypes.def"
};
}  // namespace

const DTypeInfo& dtypeInfo(DType d) { return kDTypes[static_cast<size_t>(d)]; }

std::optional<DType> lookupDType(std::string_view name) {
  for (const DTypeInfo& d : kDTypes)
    if (name == d.name) return d.id;
  for (const Alias& a : kAliases)
    if (name == a.name) return a.id;
  return std::nullopt;
}

const char* dtypeMathMode(std::string_view name) {
  for (const MathMode& m : kMathModes)
    if (name == m.name) return m.doc;
  return nullptr;
}

std::vector<std::pair<std::string, DType>> allDTypeSpellings() {
  std::vector<std::pair<std::string, DType>> out;
  for (const DTypeInfo& d : kDTypes) out.emplace_back(d.name, d.id);
  for (const Alias& a : kAliases) out.emplace_back(a.name, a.id);
  return out;
}

bool isFloat(DType d) { return dtypeInfo(d).kind == DTypeKind::Float; }
bool isInteger(DType d) {
  DTypeKind k = dtypeInfo(d).kind;
  return k == DTypeKind::Int || k == DTypeKind::UInt;
}

bool widensTo(DType from, DType to) {
  if (from == to) return true;
  const DTypeInfo& f = dtypeInfo(from);
  const DTypeInfo& t = dtypeInfo(to);
  if (f.kind == DTypeKind::Bool) return true;
  if (t.kind == DTypeKind::Bool) return false;
  if (f.kind == DTypeKind::Float) {
    if (t.kind != DTypeKind::Float) return false;
    return t.exponentBits >= f.exponentBits && t.mantissaBits >= f.mantissaBits;
  }
  // integer source
  unsigned valueBits = f.kind == DTypeKind::Int ? f.bits - 1 : f.bits;  // magnitude bits
  if (t.kind == DTypeKind::Float) return t.mantissaBits + 1 >= valueBits;
  if (t.kind == DTypeKind::Int) return t.bits - 1 >= valueBits;
  // to unsigned: only from unsigned
  return f.kind == DTypeKind::UInt && t.bits >= f.bits;
}

DType promote(DType a, DType b) {
  if (widensTo(a, b)) return b;
  if (widensTo(b, a)) return a;
  // Neither holds the other (fp16 and bf16, int32 and fp16, int64 and uint64...).
  if (isFloat(a) || isFloat(b)) {
    DType f = isFloat(a) ? a : b;
    DType o = f == a ? b : a;
    if (isFloat(o)) return dtypeInfo(a).bits >= 32 || dtypeInfo(b).bits >= 32 ? DType::FP64 : DType::FP32;
    // An integer with a float gives the float, at least fp32 (as in C: i32 + f16 is f32).
    return dtypeInfo(f).bits >= 32 ? f : DType::FP32;
  }
  return DType::INT64;
}

const PolicyInfo& policyInfo(Policy p) { return kPolicies[static_cast<size_t>(p)]; }
std::optional<Policy> lookupPolicy(std::string_view name) {
  for (const PolicyInfo& p : kPolicies)
    if (name == p.name) return p.id;
  return std::nullopt;
}
std::vector<std::string> allPolicyNames() {
  std::vector<std::string> out;
  for (const PolicyInfo& p : kPolicies) out.emplace_back(p.name);
  return out;
}

const std::vector<RoundModeInfo>& roundModes() {
  static const std::vector<RoundModeInfo> k = {
#define ROUND_MODE(ID, NAME, DOC) {RoundMode::ID, NAME, DOC},
#include "basic/DTypes.def"
  };
  return k;
}
std::optional<RoundMode> lookupRoundMode(std::string_view name) {
  for (const RoundModeInfo& r : roundModes())
    if (name == r.name) return r.id;
  return std::nullopt;
}

const std::vector<SwizzleInfo>& swizzles() {
  static const std::vector<SwizzleInfo> k = {
#define SWIZZLE(ID, NAME, DOC) {Swizzle::ID, NAME, DOC},
#include "basic/DTypes.def"
  };
  return k;
}
std::optional<Swizzle> lookupSwizzle(std::string_view name) {
  for (const SwizzleInfo& s : swizzles())
    if (name == s.name) return s.id;
  return std::nullopt;
}

std::string NumericPolicy::str() const {
  std::string s;
  if (accum) s += std::string(" @accum(") + dtypeInfo(*accum).shortName + ")";
  if (round) {
    for (const RoundModeInfo& r : roundModes())
      if (r.id == *round) s += std::string(" @round(") + r.name + ")";
  }
  if (saturate) s += " @saturate";
  if (!scale.empty()) s += " @scale(" + scale + ")";
  return s;
}

namespace {
// Optimal-string-alignment distance: insertions, deletions, substitutions and transpositions
// of adjacent characters (bf61 -> bf16) each cost one.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::string closestMatch(std::string_view name, const std::vector<std::string>& candidates) {
  if (name.empty() || name.size() > 64) return "";
  size_t limit = name.size() <= 2 ? 0 : name.size() <= 6 ? 1 : name.size() <= 12 ? 2 : 3;
  std::string best;
  size_t bestDist = SIZE_MAX;
  std::string lname = lower(name);
  for (const std::string& c : candidates) {
    if (c == name || c.size() > 64) continue;
    size_t d = lower(c) == lname ? 0 : editDistance(name, c);
    if (d < bestDist || (d == bestDist && c < best)) {
      bestDist = d;
      best = c;
    }
  }
  if (bestDist == 0 || (bestDist <= limit && bestDist < name.size())) return best;
  return "";
}

}  // namespace tessera

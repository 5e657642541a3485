// Storage dtypes, numeric policies, rounding modes and swizzles (the tables of basic/DTypes.def).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

enum class DType : uint8_t {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) ID,
#include "basic/DTypes.def"
  NumDTypes
};
enum class DTypeKind : uint8_t { Float, Int, UInt, Bool };

struct DTypeInfo {
  DType id;
  const char* name;       // canonical: fp32
  const char* shortName;  // printed: f32
  unsigned bits;
  DTypeKind kind;
  unsigned exponentBits, mantissaBits;
  const char* doc;
};
const DTypeInfo& dtypeInfo(DType d);
// A canonical name or an alias; nullopt for anything else (tf32 included).
std::optional<DType> lookupDType(std::string_view name);
// The doc line when `name` is a math mode such as tf32 (not a storage type), else nullptr.
const char* dtypeMathMode(std::string_view name);
// Every spelling (canonical names and aliases), for suggestions and docs.
std::vector<std::pair<std::string, DType>> allDTypeSpellings();

bool isFloat(DType d);
bool isInteger(DType d);  // Int or UInt
// True when every value of `from` is exactly representable in `to` (implicit widening).
bool widensTo(DType from, DType to);
// The dtype arithmetic on a and b produces (the wider one; mixed kinds go to a float that holds both).
DType promote(DType a, DType b);

enum class Policy : uint8_t {
#define POLICY(ID, NAME, ARG, MINARGS, MAXARGS, DOC) ID,
#include "basic/DTypes.def"
  NumPolicies
};
struct PolicyInfo {
  Policy id;
  const char* name;
  const char* argument;
  unsigned minArgs, maxArgs;
  const char* doc;
};
const PolicyInfo& policyInfo(Policy p);
std::optional<Policy> lookupPolicy(std::string_view name);
std::vector<std::string> allPolicyNames();

enum class RoundMode : uint8_t {
#define ROUND_MODE(ID, NAME, DOC) ID,
#include "basic/DTypes.def"
};
struct RoundModeInfo {
  RoundMode id;
  const char* name;
  const char* doc;
};
const std::vector<RoundModeInfo>& roundModes();
std::optional<RoundMode> lookupRoundMode(std::string_view name);

enum class Swizzle : uint8_t {
#define SWIZZLE(ID, NAME, DOC) ID,
#include "basic/DTypes.def"
};
struct SwizzleInfo {
  Swizzle id;
  const char* name;
  const char* doc;
};
const std::vector<SwizzleInfo>& swizzles();
std::optional<Swizzle> lookupSwizzle(std::string_view name);

// A numeric policy set attached to a dtype (`fp6 @accum(fp32) @saturate`).
struct NumericPolicy {
  std::optional<DType> accum;
  std::optional<RoundMode> round;
  bool saturate = false;
  std::string scale;                  // the scale expression as written, empty when none
  double scaleValue = 0;              // its value (a positive compile-time constant), 0 when none
  const char* roundSource = nullptr;  // the policy that set `round` (for conflict messages)
  bool empty() const { return !accum && !round && !saturate && scale.empty(); }
  std::string str() const;  // " @accum(fp32) @saturate" (leading space) or ""
  bool operator==(const NumericPolicy& o) const {
    return accum == o.accum && round == o.round && saturate == o.saturate && scale == o.scale;
  }
};

// Edit distance helper shared by every did-you-mean suggestion: the closest candidate within a
// distance that depends on the length of `name`, or "".
std::string closestMatch(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace tessera

// Queries over the builtins table (Builtins.def): lookup by qualified name or alias, namespace
// structure, and the parsed signatures the type checker reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

namespace eff {
enum : uint32_t {
  Divergent = 1u << 0,
  GroupFeature = 1u << 1,
  Barrier = 1u << 2,
  GroupCollective = 1u << 3,
  WarpCollective = 1u << 4,
  MemRead = 1u << 5,
  MemWrite = 1u << 6,
  Atomic = 1u << 7,
  NonDeterministic = 1u << 8,
  SharedAlloc = 1u << 9,
  Async = 1u << 10,
  Collective = 1u << 11,
  // In the language but without code generation yet: sema refuses it inside a kernel
  // (err_builtin_not_lowered), so that --check and the editor report what compilation would.
  NotLowered = 1u << 12,
  Uniform = 1u << 13,  // the result is the same on every tile of the group, whatever the arguments
};
}  // namespace eff
// "Barrier|GroupCollective" for docs and hover.
std::string effectNames(uint32_t effects);

enum class BuiltinId : uint16_t {
#define BUILTIN(ID, NAME, SIG, CTX, EFF, DOC) ID,
#include "sema/Builtins.def"
  NumBuiltins
};

enum class BuiltinContext : uint8_t { Kernel, Host, Both };
const char* builtinContextName(BuiltinContext c);

struct BuiltinParam {
  std::string name;
  std::string kind;  // argument kind of the notation (int, tile, ...)
  bool optional = false;
  bool keywordOnly = false;
  bool variadic = false;  // *name
};

struct BuiltinSignature {
  bool isValue = false;       // "= T": a value, not a function
  bool hasTypeParam = false;  // "[T: dtype]"
  bool typeParamOptional = false;
  bool isTypeConstructor = false;  // "-> type"
  std::vector<BuiltinParam> params;
  bool acceptsAnyKeywords = false;  // "**"
  std::string result;
  unsigned minPositional() const;
  // UINT32_MAX when variadic.
  unsigned maxPositional() const;
};

struct BuiltinInfo {
  BuiltinId id;
  const char* name;  // qualified: "tile.linear_id", "Group.sync"
  const char* signatureText;
  BuiltinContext context;
  uint32_t effects;
  const char* doc;
  bool isMethod;
  BuiltinSignature sig;
  std::vector<std::string> aliases;
  // An ELEMENTWISE row of Builtins.def: `(x: tile) -> same`, one Tile IR op on each element.
  bool elementwise = false;
  bool has(uint32_t e) const { return (effects & e) != 0; }
};

const BuiltinInfo& builtinInfo(BuiltinId id);
const std::vector<BuiltinInfo>& allBuiltins();
// A qualified name or alias (without a tessera./ts. prefix); methods are not found here.
const BuiltinInfo* lookupBuiltin(std::string_view qualifiedName);
// The method `name` of a receiver kind ("Group", "KernelFn", "Tensor").
const BuiltinInfo* lookupMethod(std::string_view receiver, std::string_view name);
// True when some builtin lives under `prefix.` ("tile", "cp_async", "cp_async.shared", "kernel").
bool isBuiltinNamespace(std::string_view prefix);
// The member names directly under a namespace (for suggestions and completion).
std::vector<std::string> builtinMembers(std::string_view prefix);
// Names visible without qualification: bare builtins and namespace roots.
const std::vector<std::string>& preludeNames();
// Parses the signature notation; returns false and sets `error` on malformed text (the unit
// tests parse every entry).
bool parseBuiltinSignature(std::string_view text, BuiltinSignature& out, std::string& error);
// The builtins section of docs/language.md (Markdown), generated from the table.
std::string builtinsMarkdown();

}  // namespace tessera

// The C header of a compiled module: one launch function per kernel, documented with the
// kernel's Tessera signature, and a C++ wrapper in a namespace named after the module. Names
// that C or C++ would read otherwise (keywords, C library functions that a namespace would
// collide with, the launch function's own `opts`) get a trailing underscore in the header
// (docs/abi.md "Generated headers"); the launch functions' symbols never change.
#include <set>
#include <sstream>

#include "codegen/host/HostEntries.h"
#include "codegen/host/HostModule.h"

namespace tessera::codegen {

namespace {

std::string extentText(const KernelInterface& k, const Extent& e) {
  switch (e.kind) {
    case Extent::Any: return "_";
    case Extent::Const: return std::to_string(e.value);
    case Extent::Symbol: return k.symbols[e.symbol];
    case Extent::Expr: break;
  }
  // Postfix to infix, fully parenthesised except at the top.
  std::vector<std::string> stack;
  for (const ExtentOp& op : e.expr) {
    if (op.op == ExtentOp::Const) {
      stack.push_back(std::to_string(op.value));
      continue;
    }
    if (op.op == ExtentOp::Symbol) {
      stack.push_back(k.symbols[op.symbol]);
      continue;
    }
    if (stack.size() < 2) return "?";
    std::string r = stack.back();
    stack.pop_back();
    std::string l = stack.back();
    stack.pop_back();
    const char* sym = op.op == ExtentOp::Add   ? "+"
                      : op.op == ExtentOp::Sub ? "-"
                      : op.op == ExtentOp::Mul ? "*"
                      : op.op == ExtentOp::Div ? "/"
                      : op.op == ExtentOp::Mod ? "%"
                                               : nullptr;
    stack.push_back(sym ? "(" + l + sym + r + ")" : "ceil_div(" + l + ", " + r + ")");
  }
  if (stack.size() != 1) return "?";
  std::string s = stack.back();
  if (s.size() > 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
  return s;
}

bool isCOrCxxKeyword(const std::string& n) {
  static const std::set<std::string> words = {
      // C23
      "alignas", "alignof", "auto", "bool", "break", "case", "char", "const", "constexpr", "continue", "default", "do",
      "double", "else", "enum", "extern", "false", "float", "for", "goto", "if", "inline", "int", "long", "nullptr",
      "register", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "struct", "switch",
      "thread_local", "true", "typedef", "typeof", "typeof_unqual", "union", "unsigned", "void", "volatile", "while",
      "_Alignas", "_Alignof", "_Atomic", "_BitInt", "_Bool", "_Complex", "_Decimal128", "_Decimal32", "_Decimal64",
      "_Generic", "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
      // C++20 (and the alternative tokens)
      "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t", "class", "compl",
      "concept", "consteval", "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete",
      "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "operator", "or", "or_eq", "private", "protected", "public", "reinterpret_cast", "requires", "static_cast",
      "template", "this", "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq",
      // Macros of the headers this one includes.
      "NULL", "INT8_MIN", "INT8_MAX", "INT16_MIN", "INT16_MAX", "INT32_MIN", "INT32_MAX", "INT64_MIN", "INT64_MAX",
      "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "SIZE_MAX"};
  return words.count(n) > 0;
}

// Functions of the C standard library: a C++ namespace of that name cannot coexist with the
// function in the global namespace (`namespace abs` next to <stdlib.h>'s abs).
bool isCLibraryFunction(const std::string& n) {
  static const std::set<std::string> names = {
      "abort",     "abs",       "acos",      "acosh",   "asin",    "asinh",    "assert",   "atan",     "atan2",
      "atanh",     "atexit",    "atof",      "atoi",    "atol",    "atoll",    "bsearch",  "calloc",   "cbrt",
      "ceil",      "clock",     "copysign",  "cos",     "cosh",    "ctime",    "difftime", "div",      "erf",
      "erfc",      "exit",      "exp",       "exp2",    "expm1",   "fabs",     "fclose",   "fdim",     "feof",
      "ferror",    "fflush",    "fgetc",     "fgets",   "floor",   "fma",      "fmax",     "fmin",     "fmod",
      "fopen",     "fprintf",   "fputc",     "fputs",   "fread",   "free",     "freopen",  "frexp",    "fscanf",
      "fseek",     "ftell",     "fwrite",    "getc",    "getchar", "getenv",   "gmtime",   "hypot",    "isalnum",
      "isalpha",   "isdigit",   "islower",   "isspace", "isupper", "labs",     "ldexp",    "ldiv",     "lgamma",
      "llabs",     "localtime", "log",       "log10",   "log1p",   "log2",     "logb",     "lrint",    "lround",
      "malloc",    "memchr",    "memcmp",    "memcpy",  "memmove", "memset",   "mktime",   "modf",     "nan",
      "nearbyint", "perror",    "pow",       "printf",  "putc",    "putchar",  "puts",     "qsort",    "raise",
      "rand",      "realloc",   "remainder", "remove",  "rename",  "rewind",   "rint",     "round",    "scalbn",
      "scanf",     "setbuf",    "setvbuf",   "signal",  "sin",     "sinh",     "snprintf", "sprintf",  "sqrt",
      "srand",     "sscanf",    "strcat",    "strchr",  "strcmp",  "strcpy",   "strcspn",  "strerror", "strftime",
      "strlen",    "strncat",   "strncmp",   "strncpy", "strpbrk", "strrchr",  "strspn",   "strstr",   "strtod",
      "strtof",    "strtok",    "strtol",    "strtoll", "strtoul", "strtoull", "system",   "tan",      "tanh",
      "tgamma",    "time",      "tmpfile",   "tolower", "toupper", "trunc",    "ungetc",   "vprintf",  "vsnprintf",
      "vsprintf"};
  return names.count(n) > 0;
}

std::string paramName(const std::string& n) { return isCOrCxxKeyword(n) || n == "opts" ? n + "_" : n; }
std::string wrapperName(const std::string& n) { return isCOrCxxKeyword(n) ? n + "_" : n; }
std::string namespaceName(const std::string& n) {
  return isCOrCxxKeyword(n) || isCLibraryFunction(n) || n == "std" || n == "tessera" ? n + "_" : n;
}

std::string tesseraSignature(const KernelInterface& k) {
  std::ostringstream os;
  os << k.name << "(";
  for (size_t i = 0; i < k.params.size(); ++i) {
    const KernelParam& p = k.params[i];
    if (i) os << ", ";
    os << p.name << ": " << (p.isMut ? "mut " : "") << dtypeName(p.dtype);
    if (p.isTensor) {
      os << "[";
      for (size_t d = 0; d < p.extents.size(); ++d) os << (d ? ", " : "") << extentText(k, p.extents[d]);
      os << "]";
    }
  }
  os << ")";
  return os.str();
}

}  // namespace

std::string headerParamName(const std::string& name) { return paramName(name); }

std::string writeHeader(const HostModuleInput& in) {
  std::string mod = cIdentifier(in.moduleName);
  std::string guard = "TESSERA_GENERATED_" + mod + "_H";
  for (char& c : guard) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  std::ostringstream os;
  os << "/* Generated by tesserac from " << (in.sourceName.empty() ? in.moduleName : in.sourceName)
     << ". Do not edit. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <stdbool.h>\n#include <stdint.h>\n"
     << "#include <tessera/runtime.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  auto cParams = [&](const KernelInterface& k, bool cpp) {
    std::ostringstream ps;
    for (const KernelParam& p : k.params) {
      ps << ", ";
      if (p.isTensor)
        ps << (cpp ? "const tessera_tensor &" : "const tessera_tensor *") << paramName(p.name);
      else
        ps << scalarCType(p.dtype) << " " << paramName(p.name);
    }
    return ps.str();
  };
  for (const KernelInterface& k : in.kernels) {
    if (!k.autotuneOf.empty()) continue;  // a candidate runs through its kernel's launch
    os << "/* " << tesseraSignature(k);
    if (k.grouped) os << ", groups of " << k.groupShape[0] * k.groupShape[1] * k.groupShape[2] << " tiles";
    os << ".\n * Checks the arguments, launches on `opts->stream` (NULL: default stream, default grid) and\n"
       << " * returns a status; on failure tessera_last_error_message() says what is wrong. */\n"
       << "tessera_status " << launchStubName(in, k) << "(const tessera_launch_options *opts" << cParams(k, false)
       << ");\n\n";
  }
  for (const HostEntry& e : in.entries) os << hostEntryDeclaration(mod, e) << "\n";
  std::string ns = namespaceName(mod);
  os << "#ifdef __cplusplus\n} /* extern \"C\" */\n\nnamespace " << ns << " {\n";
  for (const KernelInterface& k : in.kernels) {
    if (!k.autotuneOf.empty()) continue;
    std::string params = cParams(k, true);
    os << "inline tessera_status " << wrapperName(k.name) << "(" << (params.empty() ? "" : params.substr(2))
       << (params.empty() ? "" : ", ") << "const tessera_launch_options *opts = nullptr) {\n  return "
       << launchStubName(in, k) << "(opts";
    for (const KernelParam& p : k.params) os << ", " << (p.isTensor ? "&" : "") << paramName(p.name);
    os << ");\n}\n";
  }
  os << "}  // namespace " << ns << "\n#endif\n\n#endif /* " << guard << " */\n";
  return os.str();
}

}  // namespace tessera::codegen

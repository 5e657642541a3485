// Token kind names and spellings, keyword lookup, and literal decoding.
#include "frontend/Token.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace tessera {

namespace {
const char* const kKindNames[] = {
#define TOK(NAME) #NAME,
#include "frontend/TokenKinds.def"
};

const char* const kSpellings[] = {
#define TOK(NAME) nullptr,
#define KEYWORD(NAME, SPELLING) SPELLING,
#define PUNCT(NAME, SPELLING) SPELLING,
#include "frontend/TokenKinds.def"
};

const bool kIsKeyword[] = {
#define TOK(NAME) false,
#define KEYWORD(NAME, SPELLING) true,
#include "frontend/TokenKinds.def"
};
}  // namespace

const char* tokenKindName(TokenKind k) {
  auto i = static_cast<size_t>(k);
  return i < static_cast<size_t>(TokenKind::NumTokenKinds) ? kKindNames[i] : "<invalid>";
}

const char* tokenSpelling(TokenKind k) {
  auto i = static_cast<size_t>(k);
  return i < static_cast<size_t>(TokenKind::NumTokenKinds) ? kSpellings[i] : nullptr;
}

std::string tokenDescription(TokenKind k) {
  switch (k) {
    case TokenKind::Eof: return "end of file";
    case TokenKind::Newline: return "newline";
    case TokenKind::Indent: return "indent";
    case TokenKind::Dedent: return "dedent";
    case TokenKind::Error: return "invalid token";
    case TokenKind::Comment: return "comment";
    case TokenKind::Identifier: return "identifier";
    case TokenKind::IntLiteral: return "integer literal";
    case TokenKind::FloatLiteral: return "floating-point literal";
    case TokenKind::StringLiteral: return "string literal";
    case TokenKind::FStringLiteral: return "f-string";
    default: break;
  }
  if (const char* s = tokenSpelling(k)) return std::string("'") + s + "'";
  return tokenKindName(k);
}

bool isKeyword(TokenKind k) {
  auto i = static_cast<size_t>(k);
  return i < static_cast<size_t>(TokenKind::NumTokenKinds) && kIsKeyword[i];
}

namespace {
// The keywords of TokenKinds.def by their first character: a lookup is a length check and one
// memcmp per keyword with that first character (at most five), no hashing, no allocation.
struct KeywordBuckets {
  std::vector<std::pair<std::string_view, TokenKind>> byFirst[128];
  size_t longest = 0;
  KeywordBuckets() {
    const std::pair<std::string_view, TokenKind> all[] = {
#define KEYWORD(NAME, SPELLING) {SPELLING, TokenKind::NAME},
#include "frontend/TokenKinds.def"
    };
    for (const auto& kw : all) {
      byFirst[static_cast<unsigned char>(kw.first[0]) & 127].push_back(kw);
      longest = std::max(longest, kw.first.size());
    }
  }
};
}  // namespace

TokenKind keywordKind(std::string_view s) {
  static const KeywordBuckets buckets;
  if (s.size() < 2 || s.size() > buckets.longest || static_cast<unsigned char>(s[0]) >= 128)
    return TokenKind::Identifier;
  for (const auto& [spelling, kind] : buckets.byFirst[static_cast<unsigned char>(s[0])])
    if (spelling == s) return kind;
  return TokenKind::Identifier;
}

// ---- Literal decoding ----

namespace {
int digitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}
}  // namespace

std::optional<uint64_t> decodeIntLiteral(std::string_view text) {
  unsigned base = 10;
  size_t i = 0;
  if (text.size() >= 2 && text[0] == '0') {
    char p = static_cast<char>(text[1] | 0x20);
    if (p == 'x')
      base = 16, i = 2;
    else if (p == 'o')
      base = 8, i = 2;
    else if (p == 'b')
      base = 2, i = 2;
  }
  // Size suffix: the last '_' that is followed by a letter that is not a digit of the base.
  unsigned shift = 0;
  size_t end = text.size();
  if (end >= 4 && text[end - 4] == '_' && text.substr(end - 2) == "iB") {
    char m = text[end - 3];
    shift = m == 'K' ? 10 : m == 'M' ? 20 : m == 'G' ? 30 : 0;
    if (shift == 0) return std::nullopt;
    end -= 4;
  }
  uint64_t value = 0;
  bool any = false;
  for (; i < end; ++i) {
    char c = text[i];
    if (c == '_') continue;
    unsigned d = static_cast<unsigned>(digitValue(c));
    if (d >= base) return std::nullopt;
    if (__builtin_mul_overflow(value, static_cast<uint64_t>(base), &value) ||
        __builtin_add_overflow(value, static_cast<uint64_t>(d), &value))
      return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  if (shift) {
    if (value > (UINT64_MAX >> shift)) return std::nullopt;
    value <<= shift;
  }
  return value;
}

std::optional<double> decodeFloatLiteral(std::string_view text) {
  char buf[128];
  std::string big;
  char* out = buf;
  if (text.size() >= sizeof buf) {
    big.resize(text.size() + 1);
    out = big.data();
  }
  size_t n = 0;
  for (char c : text)
    if (c != '_') out[n++] = c;
  out[n] = '\0';
  if (n == 0) return std::nullopt;
  char* endp = nullptr;
  errno = 0;
  double v = std::strtod(out, &endp);
  if (endp != out + n) return std::nullopt;
  if (std::isinf(v)) return std::nullopt;
  return v;  // underflow gives 0 or a subnormal, as in Python
}

namespace {
void appendUTF8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Reads exactly `n` hex digits at s[i..]; false if there are fewer.
bool readHex(std::string_view s, size_t i, size_t n, uint32_t& v) {
  if (i + n > s.size()) return false;
  v = 0;
  for (size_t k = 0; k < n; ++k) {
    int d = digitValue(s[i + k]);
    if (d >= 16) return false;
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return true;
}
}  // namespace

std::string decodeStringLiteral(std::string_view text) {
  size_t i = 0;
  bool raw = false;
  while (i < text.size() && text[i] != '\'' && text[i] != '"') {
    if (text[i] == 'r' || text[i] == 'R') raw = true;
    ++i;
  }
  if (i >= text.size()) return {};
  char q = text[i];
  // Triple quotes need at least six characters: "" is an empty single-quoted string.
  size_t quoteLen = (text.size() - i >= 6 && text[i + 1] == q && text[i + 2] == q) ? 3 : 1;
  size_t begin = i + quoteLen;
  size_t end = text.size() >= begin + quoteLen ? text.size() - quoteLen : begin;
  std::string_view body = text.substr(begin, end - begin);
  if (raw) return std::string(body);

  return decodeEscapes(body);
}

std::string decodeEscapes(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t k = 0; k < body.size(); ++k) {
    char c = body[k];
    if (c != '\\' || k + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++k];
    uint32_t v = 0;
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\n': break;  // line continuation inside the string
      case '\r':
        if (k + 1 < body.size() && body[k + 1] == '\n') ++k;
        break;
      case 'x':
        if (readHex(body, k + 1, 2, v)) {
          appendUTF8(out, v);
          k += 2;
        } else {
          out += "\\x";
        }
        break;
      case 'u':
      case 'U': {
        size_t n = e == 'u' ? 4 : 8;
        if (readHex(body, k + 1, n, v) && v <= 0x10FFFF) {
          appendUTF8(out, v);
          k += n;
        } else {
          out += '\\';
          out += e;
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          v = static_cast<uint32_t>(e - '0');
          for (int m = 0; m < 2 && k + 1 < body.size() && body[k + 1] >= '0' && body[k + 1] <= '7'; ++m)
            v = v * 8 + static_cast<uint32_t>(body[++k] - '0');
          appendUTF8(out, v);
        } else {
          out += '\\';  // unknown escapes keep the backslash, as in Python (the scanner warned)
          out += e;
        }
    }
  }
  return out;
}

}  // namespace tessera

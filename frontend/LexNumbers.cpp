// Numeric literals after the re2c rules matched them: the fast path checks what follows and the
// value's range; the slow path (a literal the rules rejected) finds the precise problem.
#include <cstdio>

#include "frontend/FrontendDiagnostics.h"
#include "frontend/LexScanner.h"

namespace tessera {

namespace {
bool isDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool isAlpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigitOf(unsigned char c, unsigned base) {
  if (base == 16) return isDigit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
  return c >= '0' && c < '0' + base;
}
bool isSizeSuffix(std::string_view s) { return s == "_KiB" || s == "_MiB" || s == "_GiB"; }
}  // namespace

RawToken Scanner::finishInt(const unsigned char* start) {
  if (isIdentChar(*cur)) return badNumber(start);
  if (!decodeIntLiteral(text(start, cur))) {
    diags_.report(diag::err_lex_int_too_large, range(start, cur));
    return make(TokenKind::Error, start);
  }
  return make(TokenKind::IntLiteral, start);
}

RawToken Scanner::finishFloat(const unsigned char* start) {
  if (isIdentChar(*cur)) return badNumber(start);
  if (!decodeFloatLiteral(text(start, cur))) {
    diags_.report(diag::err_lex_float_too_large, range(start, cur));
    return make(TokenKind::Error, start);
  }
  return make(TokenKind::FloatLiteral, start);
}

RawToken Scanner::badNumber(const unsigned char* start) {
  // The extent: identifier characters, and for a decimal literal one fraction point and an
  // exponent sign, so that `1__0.5` or `1_e-3` is one error, not several.
  const unsigned char* p = start;
  unsigned base = 10;
  const char* baseName = "decimal";
  if (p[0] == '0') {
    switch (p[1] | 0x20) {
      case 'x': base = 16, baseName = "hexadecimal"; break;
      case 'o': base = 8, baseName = "octal"; break;
      case 'b': base = 2, baseName = "binary"; break;
      default: break;
    }
  }
  // Start after what the rules matched (at least the prefix) and note what it holds.
  if (base != 10 && p + 2 > cur) p += 2;
  if (cur > p) p = cur;
  bool letters = false, dot = false, exp = false;
  for (const unsigned char* k = start + (base == 10 ? 0 : 2); k < p; ++k) {
    dot |= *k == '.';
    exp |= base == 10 && (*k | 0x20) == 'e';
  }
  for (;;) {
    unsigned char c = *p;
    if (isIdentChar(c)) {
      if (isAlpha(c) && !(base == 10 && (c | 0x20) == 'e')) letters = true;
      if (base == 10 && (c | 0x20) == 'e') exp = true;
      ++p;
    } else if (base == 10 && !letters && !dot && !exp && c == '.' && isDigit(p[1])) {
      dot = true;
      ++p;
    } else if (base == 10 && !letters && (c == '+' || c == '-') && (p[-1] | 0x20) == 'e') {
      ++p;
    } else {
      break;
    }
  }
  cur = p;
  const unsigned char* end = p;
  auto error = [&](DiagID id, const unsigned char* b, const unsigned char* e) {
    return diags_.report(id, range(b, e));
  };
  auto fail = [&]() { return make(TokenKind::Error, start); };

  // Walk the digits; stop at the first letter that is not a digit of the base (the suffix).
  const unsigned char* i = start + (base == 10 ? 0 : 2);
  const unsigned char* digitsBegin = i;
  bool isFloat = false, anyDigit = false;
  const unsigned char* suffix = end;
  for (; i < end; ++i) {
    unsigned char c = *i;
    if (c == '_') {
      unsigned char n = i + 1 < end ? i[1] : 0;
      if (isAlpha(n) && !isDigitOf(n, base)) {  // `8_KiB`, `8_KB`
        suffix = i;
        break;
      }
      // Between two digits; right after the prefix also counts (`0x_ff`, as in Python).
      bool afterDigit = i > digitsBegin ? isDigitOf(i[-1], base) : base != 10;
      if (!afterDigit || (!isDigit(n) && !isDigitOf(n, base))) {
        const unsigned char* e = i + 1;
        while (e < end && *e == '_') ++e;
        error(diag::err_lex_number_underscore, i, e);
        return fail();
      }
      continue;
    }
    if (isDigitOf(c, base)) {
      anyDigit = true;
      continue;
    }
    if (isDigit(c)) {  // a decimal digit the base does not have
      char d[2] = {static_cast<char>(c), 0};
      error(diag::err_lex_invalid_digit, i, i + 1) << d << baseName;
      return fail();
    }
    if (base == 10 && c == '.') {
      isFloat = true;
      continue;
    }
    if (base == 10 && (c | 0x20) == 'e' && anyDigit) {
      const unsigned char* e = i + 1;
      if (e < end && (*e == '+' || *e == '-')) ++e;
      if (e >= end || !isDigit(*e)) {
        if (e < end && isIdentChar(*e)) {  // `1ex`: a suffix, not an exponent
          suffix = i;
          break;
        }
        error(diag::err_lex_missing_exponent, i, e);
        return fail();
      }
      isFloat = true;
      i = e - 1;
      continue;
    }
    suffix = i;
    break;
  }
  if (!anyDigit) {
    if (base != 10) {
      std::string prefix(reinterpret_cast<const char*>(start), 2);
      error(diag::err_lex_missing_digits, start, start + 2) << baseName << prefix;
    } else {
      error(diag::err_lex_invalid_suffix, start, end) << text(start, end) << "decimal";
    }
    return fail();
  }
  if (suffix < end) {
    std::string_view s = text(suffix, end);
    if (*suffix == '_' && isSizeSuffix(s)) {
      if (isFloat) {
        error(diag::err_lex_float_size_suffix, suffix, end) << s;
        return fail();
      }
    } else if (*suffix == '_') {
      error(diag::err_lex_unknown_size_suffix, suffix, end) << s;
      return fail();
    } else {
      error(diag::err_lex_invalid_suffix, suffix, end) << s << (isFloat ? "floating-point" : "integer");
      return fail();
    }
  }
  if (base == 10 && !isFloat && start[0] == '0') {
    for (const unsigned char* k = start; k < suffix; ++k) {
      if (isDigit(*k) && *k != '0') {
        error(diag::err_lex_leading_zeros, start, suffix);
        return fail();
      }
    }
  }
  // Nothing specific found (should not happen): still one error for the whole literal.
  error(diag::err_lex_invalid_suffix, start, end) << text(start, end) << (isFloat ? "floating-point" : "integer");
  return fail();
}

}  // namespace tessera

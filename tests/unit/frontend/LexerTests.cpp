// The scanner, its indentation layer, literal decoding and the token dump.
#include <doctest/doctest.h>
#include <set>
#include <sstream>

#include "frontend/ASTDump.h"
#include "frontend/FrontendDiagnostics.h"
#include "frontend/Lexer.h"

using namespace tessera;

namespace {

struct Lex {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  StoringDiagnosticConsumer store;
  FileID file = 0;
  std::vector<Token> toks;

  explicit Lex(std::string text, LexOptions opts = {}) {
    diags.addConsumer(&store);
    diags.setErrorLimit(0);
    file = sm.addBuffer("t.tessera", std::move(text));
    toks = lexBuffer(sm, file, diags, opts);
  }
  // Kind names separated by spaces: "kw_def Identifier ... Newline Eof".
  std::string kinds() const {
    std::string s;
    for (const Token& t : toks) {
      if (!s.empty()) s += ' ';
      s += tokenKindName(t.kind);
    }
    return s;
  }
  // "line:col" of a location.
  std::string at(SourceLoc l) const {
    LineColumn lc = sm.lineColumn(l);
    return std::to_string(lc.line) + ":" + std::to_string(lc.column);
  }
  std::string range(const Token& t) const { return at(t.range.begin) + "-" + at(t.range.end); }
  size_t diagCount() const { return store.diagnostics.size(); }
  const Diagnostic& diag(size_t i = 0) const { return store.diagnostics.at(i); }
  // The one diagnostic: its id name and "line:col-line:col".
  std::string only() const {
    if (store.diagnostics.size() != 1) return "diagnostics: " + std::to_string(store.diagnostics.size());
    const Diagnostic& d = store.diagnostics[0];
    return std::string(diagInfo(d.id).name) + " " + at(d.range.begin) + "-" + at(d.range.end);
  }
  std::string dump() const {
    std::ostringstream os;
    dumpTokens(toks, sm, os);
    return os.str();
  }
};

// The first token of kind k.
const Token& first(const Lex& l, TokenKind k) {
  for (const Token& t : l.toks)
    if (t.kind == k) return t;
  static Token none;
  FAIL("no token of kind " << tokenKindName(k));
  return none;
}

}  // namespace

// ---- The catalog ----

TEST_CASE("every keyword and punctuator lexes as itself, alone and between identifiers") {
  unsigned count = 0;
  for (unsigned i = 0; i < static_cast<unsigned>(TokenKind::NumTokenKinds); ++i) {
    auto k = static_cast<TokenKind>(i);
    const char* sp = tokenSpelling(k);
    if (!sp) continue;
    ++count;
    CAPTURE(sp);
    Lex l(sp);
    REQUIRE(l.toks.size() == 3);
    CHECK(l.toks[0].kind == k);
    CHECK(l.toks[0].text == sp);
    CHECK(l.toks[0].atLineStart);
    CHECK(l.toks[1].kind == TokenKind::Newline);
    CHECK(l.toks[2].kind == TokenKind::Eof);
    CHECK(l.diagCount() == 0);
    // Glued to identifiers (punctuators) or separated by blanks (keywords).
    std::string glued = isKeyword(k) ? std::string("a ") + sp + " b" : std::string("a") + sp + "b";
    Lex g(glued);
    REQUIRE(g.toks.size() >= 4);
    CHECK(g.toks[1].kind == k);
    CHECK(g.toks[1].range.begin.offset == (isKeyword(k) ? 2u : 1u));
    CHECK(g.toks[1].range.end.offset == g.toks[1].range.begin.offset + std::string_view(sp).size());
  }
  CHECK(count == 36 + 47);
}

TEST_CASE("keywordKind agrees with the catalog and rejects near misses") {
  for (unsigned i = 0; i < static_cast<unsigned>(TokenKind::NumTokenKinds); ++i) {
    auto k = static_cast<TokenKind>(i);
    if (!isKeyword(k)) continue;
    CAPTURE(tokenSpelling(k));
    CHECK(keywordKind(tokenSpelling(k)) == k);
    std::string longer = std::string(tokenSpelling(k)) + "x";
    CHECK(keywordKind(longer) == TokenKind::Identifier);
    std::string shorter(tokenSpelling(k), std::string_view(tokenSpelling(k)).size() - 1);
    CHECK(keywordKind(shorter) == TokenKind::Identifier);
  }
  for (const char* id : {"define", "Def", "DEF", "true", "none", "i", "x", "_", "mutable", "tile", "kernel", "e"})
    CHECK(keywordKind(id) == TokenKind::Identifier);
  CHECK(!isKeyword(TokenKind::Identifier));
  CHECK(!isKeyword(TokenKind::l_paren));
}

TEST_CASE("names, spellings and descriptions") {
  CHECK(std::string(tokenKindName(TokenKind::Identifier)) == "Identifier");
  CHECK(std::string(tokenKindName(TokenKind::kw_def)) == "kw_def");
  CHECK(std::string(tokenKindName(TokenKind::l_paren)) == "l_paren");
  CHECK(std::string(tokenSpelling(TokenKind::starstarequal)) == "**=");
  CHECK(tokenSpelling(TokenKind::Identifier) == nullptr);
  CHECK(tokenDescription(TokenKind::l_paren) == "'('");
  CHECK(tokenDescription(TokenKind::kw_def) == "'def'");
  CHECK(tokenDescription(TokenKind::Identifier) == "identifier");
  CHECK(tokenDescription(TokenKind::IntLiteral) == "integer literal");
  CHECK(tokenDescription(TokenKind::Newline) == "newline");
  CHECK(tokenDescription(TokenKind::Indent) == "indent");
  CHECK(tokenDescription(TokenKind::Eof) == "end of file");
  for (unsigned i = 0; i < static_cast<unsigned>(TokenKind::NumTokenKinds); ++i)
    CHECK(!tokenDescription(static_cast<TokenKind>(i)).empty());
}

TEST_CASE("a sample program produces every token kind") {
  std::string src;
  for (unsigned i = 0; i < static_cast<unsigned>(TokenKind::NumTokenKinds); ++i)
    if (const char* sp = tokenSpelling(static_cast<TokenKind>(i))) src += std::string(sp) + " ";
  src += "\nif x:  # comment\n    y = 1 + 2.0 + 'a' + f'{b}'\n$\n";
  Lex l(src, LexOptions{true});
  std::set<TokenKind> seen;
  for (const Token& t : l.toks) seen.insert(t.kind);
  for (unsigned i = 0; i < static_cast<unsigned>(TokenKind::NumTokenKinds); ++i) {
    CAPTURE(tokenKindName(static_cast<TokenKind>(i)));
    CHECK(seen.count(static_cast<TokenKind>(i)) == 1);
  }
  CHECK(l.only() == "err_lex_unexpected_char 4:1-4:2");
}

TEST_CASE("longest match for punctuators") {
  CHECK(Lex("a**=b").kinds() == "Identifier starstarequal Identifier Newline Eof");
  CHECK(Lex("a//=b").kinds() == "Identifier slashslashequal Identifier Newline Eof");
  CHECK(Lex("a>>=b").kinds() == "Identifier greatergreaterequal Identifier Newline Eof");
  CHECK(Lex("a<<=b").kinds() == "Identifier lesslessequal Identifier Newline Eof");
  CHECK(Lex("x[...]").kinds() == "Identifier l_square ellipsis r_square Newline Eof");
  CHECK(Lex("....").kinds() == "ellipsis period Newline Eof");
  CHECK(Lex("f()->T").kinds() == "Identifier l_paren r_paren arrow Identifier Newline Eof");
  CHECK(Lex("(a:=b)").kinds() == "l_paren Identifier walrus Identifier r_paren Newline Eof");
  CHECK(Lex("a***b").kinds() == "Identifier starstar star Identifier Newline Eof");
  CHECK(Lex("a!=b").kinds() == "Identifier exclaimequal Identifier Newline Eof");
  CHECK(Lex("a<=>b").kinds() == "Identifier lessequal greater Identifier Newline Eof");
  CHECK(Lex("a.b").kinds() == "Identifier period Identifier Newline Eof");
}

// ---- Layout ----

TEST_CASE("empty files, blank lines and comment-only files produce only Eof") {
  for (const char* src :
       {"", "\n", "\n\n\n", "   \n\t\n", "# only a comment", "# a\n   # b\n\n# c\n", "\r\n\r\n", "  "}) {
    CAPTURE(src);
    Lex l(src);
    CHECK(l.kinds() == "Eof");
    CHECK(l.diagCount() == 0);
  }
}

TEST_CASE("comments are kept only when asked, and never make a Newline on their own") {
  Lex l("x = 1  # one\n# two\ny\n", LexOptions{true});
  CHECK(l.kinds() == "Identifier equal IntLiteral Comment Newline Comment Identifier Newline Eof");
  CHECK(l.toks[3].text == "# one");
  CHECK(l.toks[5].text == "# two");
  CHECK(l.toks[6].atLineStart);
  Lex d("x = 1  # one\n# two\ny\n");
  CHECK(d.kinds() == "Identifier equal IntLiteral Newline Identifier Newline Eof");
}

TEST_CASE("nested blocks and a dedent of several levels at once") {
  Lex l(
      "def f():\n"
      "    if a:\n"
      "        while b:\n"
      "            pass\n"
      "x\n");
  CHECK(l.kinds() ==
        "kw_def Identifier l_paren r_paren colon Newline "
        "Indent kw_if Identifier colon Newline "
        "Indent kw_while Identifier colon Newline "
        "Indent kw_pass Newline "
        "Dedent Dedent Dedent Identifier Newline Eof");
  CHECK(l.diagCount() == 0);
  // Layout tokens: Indent covers the blanks; Dedent is empty, at the next token.
  const Token& indent = first(l, TokenKind::Indent);
  CHECK(l.range(indent) == "2:1-2:5");
  CHECK(indent.text.empty());
  const Token& dedent = first(l, TokenKind::Dedent);
  CHECK(l.range(dedent) == "5:1-5:1");
  const Token& nl = first(l, TokenKind::Newline);
  CHECK(l.range(nl) == "1:9-2:1");
  CHECK(nl.text.empty());
}

TEST_CASE("dedent to an intermediate level") {
  Lex l("a:\n  b:\n    c\n  d\ne\n");
  CHECK(l.kinds() ==
        "Identifier colon Newline Indent Identifier colon Newline Indent Identifier Newline "
        "Dedent Identifier Newline Dedent Identifier Newline Eof");
}

TEST_CASE("dedents at end of file, with and without a trailing newline") {
  const char* want =
      "Identifier colon Newline Indent Identifier colon Newline Indent Identifier Newline Dedent Dedent Eof";
  Lex a("a:\n  b:\n    c\n");
  CHECK(a.kinds() == want);
  Lex b("a:\n  b:\n    c");
  CHECK(b.kinds() == want);
  // Without a trailing newline, the Newline, Dedents and Eof sit at the end of the text.
  CHECK(b.range(b.toks[b.toks.size() - 4]) == "3:6-3:6");
  CHECK(b.range(b.toks.back()) == "3:6-3:6");
  Lex c("a:\n  b:\n    c\n\n   \n# trailing comment\n");
  CHECK(c.kinds() == want);
}

TEST_CASE("blank and comment lines inside blocks do not affect indentation") {
  Lex l("if a:\n    x\n\n  # odd comment\n        \n    y\nz\n");
  CHECK(l.kinds() ==
        "kw_if Identifier colon Newline Indent Identifier Newline Identifier Newline Dedent Identifier Newline Eof");
  CHECK(l.diagCount() == 0);
}

TEST_CASE("brackets join lines whatever their indentation") {
  Lex l(
      "x = f(1,\n"
      "         2,\n"
      "  [3,\n"
      "4], {5:\n"
      "        6})\n"
      "y\n");
  CHECK(l.kinds() ==
        "Identifier equal Identifier l_paren IntLiteral comma IntLiteral comma l_square IntLiteral comma "
        "IntLiteral r_square comma l_brace IntLiteral colon IntLiteral r_brace r_paren Newline "
        "Identifier Newline Eof");
  CHECK(l.diagCount() == 0);
  // The first token of each physical line is at a line start, inside brackets too.
  std::vector<std::string> starts;
  for (const Token& t : l.toks)
    if (t.atLineStart) starts.push_back(l.at(t.range.begin));
  CHECK(starts == std::vector<std::string>{"1:1", "2:10", "3:3", "4:1", "5:9", "6:1"});
}

TEST_CASE("a stray closer leaves the depth at zero") {
  Lex l("a)\nif b:\n  c\n");
  CHECK(l.kinds() == "Identifier r_paren Newline kw_if Identifier colon Newline Indent Identifier Newline Dedent Eof");
  CHECK(l.diagCount() == 0);
}

TEST_CASE("an unclosed bracket at end of file still ends the line") {
  Lex l("if a:\n  f(1,\n");
  CHECK(l.kinds() == "kw_if Identifier colon Newline Indent Identifier l_paren IntLiteral comma Newline Dedent Eof");
}

TEST_CASE("backslash continuation joins lines; the next line's blanks are not indentation") {
  Lex l("x = 1 + \\\n        2\ny\n");
  CHECK(l.kinds() == "Identifier equal IntLiteral plus IntLiteral Newline Identifier Newline Eof");
  CHECK(l.diagCount() == 0);
  Lex crlf("x = \\\r\n  2\r\n");
  CHECK(crlf.kinds() == "Identifier equal IntLiteral Newline Eof");
}

TEST_CASE("CRLF and lone CR are newlines") {
  Lex l("if a:\r\n    b\r\nc\r\n");
  CHECK(l.kinds() == "kw_if Identifier colon Newline Indent Identifier Newline Dedent Identifier Newline Eof");
  CHECK(l.range(l.toks[3]) == "1:6-2:1");  // the Newline covers "\r\n"
  Lex cr("if a:\r    b\rc\r");
  CHECK(cr.kinds() == "kw_if Identifier colon Newline Indent Identifier Newline Dedent Identifier Newline Eof");
  CHECK(cr.diagCount() == 0);
}

TEST_CASE("tabs count to the next multiple of 8 and may match spaces consistently") {
  // A tab alone and a tab after up to seven spaces are both column 8 but differ with tab size 1.
  Lex ok("if a:\n\tb\n\tc\n");
  CHECK(ok.kinds() == "kw_if Identifier colon Newline Indent Identifier Newline Identifier Newline Dedent Eof");
  CHECK(ok.diagCount() == 0);
  Lex nested("if a:\n\tif b:\n\t\tc\n\td\n");
  CHECK(nested.diagCount() == 0);
  Lex mixed("if a:\n        b\n\tc\n");
  CHECK(mixed.only() == "err_lex_inconsistent_tabs 3:1-3:2");
  Lex deeper("if a:\n    b\n    if c:\n\td\n");  // column 8 > 4 with tabs, but 1 < 4 with tab size 1
  CHECK(deeper.only() == "err_lex_inconsistent_tabs 4:1-4:2");
  Lex back("if a:\n  \tb\n        c\n");  // both column 8, but 3 vs 8 with tab size 1
  CHECK(back.only() == "err_lex_inconsistent_tabs 3:1-3:9");
}

TEST_CASE("an unindent that matches no outer level is diagnosed once and recovers") {
  Lex l("if a:\n    b\n  c\n  d\ne\n");
  CHECK(l.only() == "err_lex_bad_dedent 3:3-3:4");
  // The bad level gets no Indent token, so Indents and Dedents stay balanced.
  CHECK(l.kinds() ==
        "kw_if Identifier colon Newline Indent Identifier Newline Dedent Identifier Newline "
        "Identifier Newline Identifier Newline Eof");
}

TEST_CASE("an indented first line gives an Indent (the parser reports it)") {
  Lex l("  x\n");
  CHECK(l.kinds() == "Indent Identifier Newline Dedent Eof");
  CHECK(l.diagCount() == 0);
}

TEST_CASE("atLineStart marks the first token of each physical line") {
  Lex l("a = b\n  c\nd(e,\n f) + \\\n g  # x\n# y\n", LexOptions{true});
  std::vector<std::string> starts;
  for (const Token& t : l.toks)
    if (t.atLineStart) starts.push_back(std::string(t.text));
  CHECK(starts == std::vector<std::string>{"a", "c", "d", "f", "g", "# y"});
  // Layout tokens are never at a line start.
  for (const Token& t : l.toks)
    if (t.isOneOf(TokenKind::Newline, TokenKind::Indent, TokenKind::Dedent, TokenKind::Eof)) CHECK(!t.atLineStart);
}

TEST_CASE("a byte order mark is skipped") {
  Lex l("\xEF\xBB\xBFx\n");
  CHECK(l.kinds() == "Identifier Newline Eof");
  CHECK(l.diagCount() == 0);
  CHECK(l.range(l.toks[0]) == "1:4-1:5");
}

// ---- Literals ----

TEST_CASE("integer literals and their values") {
  struct Case {
    const char* text;
    uint64_t value;
  } cases[] = {
      {"0", 0},
      {"42", 42},
      {"0x2A", 42},
      {"0X2a", 42},
      {"0o17", 15},
      {"0O17", 15},
      {"0b101", 5},
      {"0B1_0_1", 5},
      {"1_000_000", 1000000},
      {"8_KiB", 8192},
      {"64_MiB", 64ull << 20},
      {"2_GiB", 2ull << 30},
      {"0x_ff", 255},
      {"00", 0},
      {"0_0", 0},
      {"18446744073709551615", UINT64_MAX},
      {"0xFFFF_FFFF_FFFF_FFFF", UINT64_MAX},
      {"1_KiB", 1024},
      {"0x10_KiB", 16384},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    Lex l(c.text);
    REQUIRE(l.toks.size() == 3);
    CHECK(l.toks[0].kind == TokenKind::IntLiteral);
    CHECK(l.toks[0].text == c.text);
    CHECK(l.diagCount() == 0);
    CHECK(decodeIntLiteral(c.text) == c.value);
  }
  CHECK(!decodeIntLiteral("18446744073709551616").has_value());
  CHECK(!decodeIntLiteral("17179869184_GiB").has_value());
  CHECK(!decodeIntLiteral("0x1_0000_0000_0000_0000").has_value());
}

TEST_CASE("floating-point literals and their values") {
  struct Case {
    const char* text;
    double value;
  } cases[] = {
      {"1.0", 1.0},   {".5", 0.5},  {"1.", 1.0},     {"1e-3", 1e-3},      {"2.5E+10", 2.5e10}, {"1_000.5", 1000.5},
      {"1e10", 1e10}, {"0.0", 0.0}, {"012.5", 12.5}, {"3.14_15", 3.1415}, {"1_0e1_0", 10e10},  {"1e-400", 0.0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    Lex l(c.text);
    REQUIRE(l.toks.size() == 3);
    CHECK(l.toks[0].kind == TokenKind::FloatLiteral);
    CHECK(l.toks[0].text == c.text);
    CHECK(l.diagCount() == 0);
    REQUIRE(decodeFloatLiteral(c.text).has_value());
    CHECK(*decodeFloatLiteral(c.text) == doctest::Approx(c.value));
  }
  CHECK(!decodeFloatLiteral("1e999").has_value());
}

TEST_CASE("numbers next to other tokens") {
  CHECK(Lex("x[1:2]").kinds() == "Identifier l_square IntLiteral colon IntLiteral r_square Newline Eof");
  CHECK(Lex("1-2").kinds() == "IntLiteral minus IntLiteral Newline Eof");
  CHECK(Lex("1e3-2").kinds() == "FloatLiteral minus IntLiteral Newline Eof");
  CHECK(Lex("0x1e-3").kinds() == "IntLiteral minus IntLiteral Newline Eof");
  CHECK(Lex("(128,)").kinds() == "l_paren IntLiteral comma r_paren Newline Eof");
  CHECK(Lex("a.b.c").kinds() == "Identifier period Identifier period Identifier Newline Eof");
}

TEST_CASE("string literals: quotes, prefixes, escapes and their values") {
  struct Case {
    const char* text;
    TokenKind kind;
    const char* value;
  } cases[] = {
      {"'abc'", TokenKind::StringLiteral, "abc"},
      {"\"abc\"", TokenKind::StringLiteral, "abc"},
      {"''", TokenKind::StringLiteral, ""},
      {"\"\"", TokenKind::StringLiteral, ""},
      {"'it\\'s'", TokenKind::StringLiteral, "it's"},
      {"\"say \\\"hi\\\"\"", TokenKind::StringLiteral, "say \"hi\""},
      {"'a\\nb\\tc\\\\d\\re\\0f'", TokenKind::StringLiteral, "a\nb\tc\\d\re"},  // value checked below
      {"'\\x41\\u00e9'", TokenKind::StringLiteral, "A\xC3\xA9"},
      {"r'a\\nb'", TokenKind::StringLiteral, "a\\nb"},
      {"R\"\\d+\"", TokenKind::StringLiteral, "\\d+"},
      {"r'\\''", TokenKind::StringLiteral, "\\'"},
      {"u'x'", TokenKind::StringLiteral, "x"},
      {"'''a 'quoted' \"x\"\nline2'''", TokenKind::StringLiteral, "a 'quoted' \"x\"\nline2"},
      {"\"\"\"doc \"\" string\"\"\"", TokenKind::StringLiteral, "doc \"\" string"},
      {"\"\"\"\"\"\"", TokenKind::StringLiteral, ""},
      {"f'x{a}y'", TokenKind::FStringLiteral, "x{a}y"},
      {"F\"{a!r:>{w}}\"", TokenKind::FStringLiteral, "{a!r:>{w}}"},
      {"rf'\\d{x}'", TokenKind::FStringLiteral, "\\d{x}"},
      {"fR'{x}'", TokenKind::FStringLiteral, "{x}"},
      {"f'''{a}\n{b}'''", TokenKind::FStringLiteral, "{a}\n{b}"},
      {"'caf\xC3\xA9'", TokenKind::StringLiteral, "caf\xC3\xA9"},
      {"'a\\\nb'", TokenKind::StringLiteral, "ab"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    Lex l(c.text);
    REQUIRE(l.toks.size() == 3);
    CHECK(l.toks[0].kind == c.kind);
    CHECK(l.toks[0].text == c.text);
    CHECK(l.diagCount() == 0);
    if (std::string_view(c.text).find("\\0") == std::string_view::npos) CHECK(decodeStringLiteral(c.text) == c.value);
  }
  CHECK(decodeStringLiteral("'a\\nb\\tc\\\\d\\re\\0f'") == std::string("a\nb\tc\\d\re\0f", 11));
  CHECK(decodeStringLiteral("'\\101\\7'") == "A\x07");
  CHECK(decodeStringLiteral("'\\q'") == "\\q");
}

TEST_CASE("f-strings are one token from prefix to closing quote, with nested quotes of the other kind") {
  Lex l("devices=[f\"cuda:{i}\" for i in range(72)]\n");
  CHECK(l.kinds() ==
        "Identifier equal l_square FStringLiteral kw_for Identifier kw_in Identifier l_paren IntLiteral "
        "r_paren r_square Newline Eof");
  CHECK(first(l, TokenKind::FStringLiteral).text == "f\"cuda:{i}\"");
  Lex n("f\"{d['k']}\"");
  CHECK(n.kinds() == "FStringLiteral Newline Eof");
}

TEST_CASE("a triple-quoted string spanning lines does not disturb the layout") {
  Lex l("def f():\n    \"\"\"Doc.\n\nmore\"\"\"\n    pass\n");
  CHECK(l.kinds() ==
        "kw_def Identifier l_paren r_paren colon Newline Indent StringLiteral Newline kw_pass Newline "
        "Dedent Eof");
  CHECK(l.range(l.toks[7]) == "2:5-4:8");
}

TEST_CASE("string prefixes only when followed by a quote") {
  CHECK(Lex("r f rf fr u").kinds() == "Identifier Identifier Identifier Identifier Identifier Newline Eof");
  CHECK(Lex("b'x'").kinds() == "Identifier StringLiteral Newline Eof");
  CHECK(Lex("rb'x'").kinds() == "Identifier StringLiteral Newline Eof");
}

// ---- Errors ----

TEST_CASE("unexpected characters") {
  for (const char* c : {"$", "?", "`"}) {
    CAPTURE(c);
    Lex l(std::string("a ") + c + " b");
    CHECK(l.only() == "err_lex_unexpected_char 1:3-1:4");
    CHECK(l.diag().message == std::string("unexpected character '") + c + "'");
    CHECK(l.kinds() == "Identifier Error Identifier Newline Eof");
  }
  Lex ctl("a \x01 b");
  CHECK(ctl.diag().message == "unexpected character '\\x01'");
  Lex bang("if !a:\n  b\n");
  CHECK(bang.only() == "err_lex_lone_bang 1:4-1:5");
  // With an operand after it, '!' is read as 'not' (after the error) so that nothing cascades.
  CHECK(bang.kinds() == "kw_if kw_not Identifier colon Newline Indent Identifier Newline Dedent Eof");
  Lex lone("x = a !\n");
  CHECK(lone.only() == "err_lex_lone_bang 1:7-1:8");
  CHECK(lone.kinds() == "Identifier equal Identifier Error Newline Eof");
  // C's && and || are reported and read as 'and' and 'or'.
  Lex cops("a && b || c\n");
  CHECK(cops.diagCount() == 2);
  CHECK(cops.kinds() == "Identifier kw_and Identifier kw_or Identifier Newline Eof");
}

TEST_CASE("non-ASCII characters outside strings and comments") {
  Lex l("caf\xC3\xA9 = 1  # caf\xC3\xA9\n");
  CHECK(l.only() == "err_lex_non_ascii 1:4-1:6");
  CHECK(l.diag().message == "non-ASCII character '\xC3\xA9' (U+00E9) is not allowed outside strings and comments");
  CHECK(l.kinds() == "Identifier Error equal IntLiteral Newline Eof");
  Lex four("x = \xF0\x9F\x98\x80\n");
  CHECK(four.only() == "err_lex_non_ascii 1:5-1:9");
  Lex bad("x = \xFF\xFE\n");
  CHECK(bad.diagCount() == 2);
  CHECK(bad.diag(0).id == diag::err_lex_invalid_utf8);
  CHECK(bad.diag(0).message == "invalid UTF-8 byte 0xff in source file");
  Lex truncated("\xC3");
  CHECK(truncated.only() == "err_lex_invalid_utf8 1:1-1:2");
}

TEST_CASE("embedded NUL characters") {
  Lex l(std::string("a\0b\n", 4));
  CHECK(l.only() == "err_lex_embedded_nul 1:2-1:3");
  CHECK(l.kinds() == "Identifier Error Identifier Newline Eof");
  Lex s(std::string("'a\0b'\n", 6));
  CHECK(s.only() == "err_lex_embedded_nul 1:3-1:4");
  CHECK(s.kinds() == "StringLiteral Newline Eof");
}

TEST_CASE("backslash not followed by a newline") {
  Lex l("x = 1 \\ 2\n");
  CHECK(l.only() == "err_lex_stray_backslash 1:7-1:8");
  Lex eof("x = \\");
  CHECK(eof.only() == "err_lex_stray_backslash 1:5-1:6");
}

TEST_CASE("unterminated strings") {
  Lex l("x = 'abc\ny = 1\n");
  CHECK(l.only() == "err_lex_unterminated_string 1:5-1:9");
  CHECK(l.kinds() == "Identifier equal Error Newline Identifier equal IntLiteral Newline Eof");
  Lex f("x = f\"a{b}\n");
  CHECK(f.only() == "err_lex_unterminated_string 1:5-1:11");
  Lex eof("x = \"abc");
  CHECK(eof.only() == "err_lex_unterminated_string 1:5-1:9");
  Lex t("x = 1\ny = '''abc\n\ndef\n");
  CHECK(t.only() == "err_lex_unterminated_triple_string 2:5-2:8");
  CHECK(t.kinds() == "Identifier equal IntLiteral Newline Identifier equal Error Newline Eof");
  Lex rt("y = r\"\"\"abc\\\"\"\"");
  CHECK(rt.only() == "err_lex_unterminated_triple_string 1:5-1:9");
}

TEST_CASE("invalid escapes are warnings and the string stays a string") {
  Lex l("x = '\\d and \\q'\n");
  REQUIRE(l.diagCount() == 2);
  CHECK(l.diag(0).id == diag::warn_lex_invalid_escape);
  CHECK(l.diag(0).severity == Severity::Warning);
  CHECK(l.diag(0).message == "invalid escape sequence '\\d'");
  CHECK(l.at(l.diag(0).range.begin) == "1:6");
  CHECK(l.at(l.diag(1).range.begin) == "1:13");
  CHECK(l.kinds() == "Identifier equal StringLiteral Newline Eof");
  CHECK(Lex("r'\\d'").diagCount() == 0);
  Lex x("'\\x4'");
  CHECK(x.only() == "warn_lex_invalid_escape 1:2-1:4");
  Lex u("'\\\xC3\xA9'");
  CHECK(u.only() == "warn_lex_invalid_escape 1:2-1:5");
  CHECK(u.diag().message == "invalid escape sequence '\\\xC3\xA9'");
}

TEST_CASE("malformed numbers: one precise error each, then lexing goes on") {
  struct Case {
    const char* text;
    const char* diag;  // id and range
    const char* message;
  } cases[] = {
      {"x = 1__0 + y", "err_lex_number_underscore 1:6-1:8", "'_' in a numeric literal must be between two digits"},
      {"x = 1_ + y", "err_lex_number_underscore 1:6-1:7", nullptr},
      {"x = 1._5 + y", "err_lex_number_underscore 1:7-1:8", nullptr},
      {"x = 0b1__1 + y", "err_lex_number_underscore 1:8-1:10", nullptr},
      {"x = 0x + y", "err_lex_missing_digits 1:5-1:7", "expected hexadecimal digits after '0x'"},
      {"x = 0b + y", "err_lex_missing_digits 1:5-1:7", "expected binary digits after '0b'"},
      {"x = 0o + y", "err_lex_missing_digits 1:5-1:7", "expected octal digits after '0o'"},
      {"x = 0b12 + y", "err_lex_invalid_digit 1:8-1:9", "invalid digit '2' in binary literal"},
      {"x = 0o8 + y", "err_lex_invalid_digit 1:7-1:8", "invalid digit '8' in octal literal"},
      {"x = 012 + y", "err_lex_leading_zeros 1:5-1:8", nullptr},
      {"x = 0_1 + y", "err_lex_leading_zeros 1:5-1:8", nullptr},
      {"x = 1e + y", "err_lex_missing_exponent 1:6-1:7", "exponent has no digits"},
      {"x = 1.5E+ + y", "err_lex_missing_exponent 1:8-1:10", nullptr},
      {"x = 8_KB + y", "err_lex_unknown_size_suffix 1:6-1:9",
       "unknown size suffix '_KB'; valid suffixes are _KiB, _MiB and _GiB"},
      {"x = 8_kib + y", "err_lex_unknown_size_suffix 1:6-1:10", nullptr},
      {"x = 1.5_KiB + y", "err_lex_float_size_suffix 1:8-1:12",
       "size suffix '_KiB' is not allowed on a floating-point literal"},
      {"x = 1e3_MiB + y", "err_lex_float_size_suffix 1:8-1:12", nullptr},
      {"x = 123abc + y", "err_lex_invalid_suffix 1:8-1:11", "invalid suffix 'abc' on integer literal"},
      {"x = 1.5x + y", "err_lex_invalid_suffix 1:8-1:9", "invalid suffix 'x' on floating-point literal"},
      {"x = 0x1g + y", "err_lex_invalid_suffix 1:8-1:9", nullptr},
      {"x = 18446744073709551616 + y", "err_lex_int_too_large 1:5-1:25",
       "integer literal is too large to be represented in 64 bits"},
      {"x = 17179869184_GiB + y", "err_lex_int_too_large 1:5-1:20", nullptr},
      {"x = 1e999 + y", "err_lex_float_too_large 1:5-1:10", nullptr},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    Lex l(c.text);
    CHECK(l.only() == c.diag);
    if (c.message && l.diagCount()) CHECK(l.diag().message == c.message);
    CHECK(l.kinds() == "Identifier equal Error plus Identifier Newline Eof");
  }
}

TEST_CASE("errors never stop the scanner") {
  Lex l("$ ? ` ! \\ 0x 1__ 'abc\n\"\"\"x\n");
  CHECK(l.diagCount() == 9);
  CHECK(l.toks.back().kind == TokenKind::Eof);
  // Every byte value, alone and after a quote and a digit.
  for (int c = 1; c < 256; ++c) {
    std::string s(1, static_cast<char>(c));
    for (std::string src : {s, "'" + s, "1" + s, "0x" + s, "\\" + s, "f\"{" + s}) {
      Lex x(src);
      CHECK(x.toks.back().kind == TokenKind::Eof);
    }
  }
}

// ---- Fragments and dump ----

TEST_CASE("lexFragment keeps exact locations and adds no layout tokens") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  StoringDiagnosticConsumer store;
  diags.addConsumer(&store);
  sm.addBuffer("other.tessera", "pad\n");
  std::string src = "s = f\"{a +\n  b[1]:>{w}} {$}\"\n";
  FileID file = sm.addBuffer("t.tessera", src);
  SourceLoc base = sm.bufferStart(file);
  // The first field: "a +\n  b[1]".
  uint32_t b = static_cast<uint32_t>(src.find('{')) + 1, e = static_cast<uint32_t>(src.find(':', b));
  auto toks = lexFragment(sm, SourceRange(sm.locAt(file, b), sm.locAt(file, e)), diags);
  std::string kinds;
  for (const Token& t : toks) kinds += std::string(tokenKindName(t.kind)) + " ";
  CHECK(kinds == "Identifier plus Identifier l_square IntLiteral r_square Eof ");
  CHECK(toks[0].range.begin.offset == base.offset + b);
  CHECK(toks[0].text == "a");
  CHECK(!toks[0].atLineStart);  // as if inside brackets
  CHECK(toks[2].atLineStart);   // `b` begins line 2
  CHECK(!toks[3].atLineStart);
  CHECK(sm.lineColumn(toks[2].range.begin).line == 2);
  CHECK(sm.lineColumn(toks[2].range.begin).column == 3);
  CHECK(toks.back().range.begin.offset == base.offset + e);
  CHECK(toks[2].text.data() == sm.bufferText(file).data() + src.find('b'));
  CHECK(store.diagnostics.empty());
  // An error inside a fragment points into the original buffer.
  uint32_t d = static_cast<uint32_t>(src.find('$'));
  auto bad = lexFragment(sm, SourceRange(sm.locAt(file, d), sm.locAt(file, d + 1)), diags);
  REQUIRE(store.diagnostics.size() == 1);
  CHECK(store.diagnostics[0].range.begin.offset == base.offset + d);
  CHECK(bad.size() == 2);
  // A fragment ending inside a longer token stops at its end.
  FileID g = sm.addBuffer("g.tessera", "x = abcdef >>= 1");
  auto sub = [&](uint32_t from, uint32_t to) {
    std::string k;
    for (const Token& t : lexFragment(sm, SourceRange(sm.locAt(g, from), sm.locAt(g, to)), diags))
      k += std::string(tokenKindName(t.kind)) + "'" + std::string(t.text) + "' ";
    return k;
  };
  CHECK(sub(4, 7) == "Identifier'abc' Eof'' ");
  CHECK(sub(11, 13) == "greatergreater'>>' Eof'' ");
  CHECK(sub(0, 16) == "Identifier'x' equal'=' Identifier'abcdef' greatergreaterequal'>>=' IntLiteral'1' Eof'' ");
  CHECK(sub(5, 5) == "Eof'' ");
}

TEST_CASE("dumpTokens prints one token per line with escaped text") {
  Lex l("x = 'a\\n\"b\"'\nif y:\n  z\n");
  CHECK(l.dump() ==
        "1:1-1:2 Identifier 'x'\n"
        "1:3-1:4 equal '='\n"
        "1:5-1:13 StringLiteral '\\'a\\\\n\"b\"\\''\n"
        "1:13-2:1 Newline\n"
        "2:1-2:3 kw_if 'if'\n"
        "2:4-2:5 Identifier 'y'\n"
        "2:5-2:6 colon ':'\n"
        "2:6-3:1 Newline\n"
        "3:1-3:3 Indent\n"
        "3:3-3:4 Identifier 'z'\n"
        "3:4-4:1 Newline\n"
        "4:1-4:1 Dedent\n"
        "4:1-4:1 Eof\n");
  Lex m("'''a\nb'''");
  CHECK(m.dump().substr(0, 30) == "1:1-2:5 StringLiteral '\\'\\'\\'a");
}

TEST_CASE("a large file lexes quickly and the token vector does not reallocate per token") {
  std::string src;
  for (int i = 0; i < 20000; ++i)
    src += "def f" + std::to_string(i) + "(x: f32[n], y: mut f32[n]):\n    y[i] = x[i] * 2.0 + 0x1F  # c\n\n";
  Lex l(src);
  CHECK(l.diagCount() == 0);
  CHECK(l.toks.size() == 20000u * 36u + 1u);
}

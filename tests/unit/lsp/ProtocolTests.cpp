// Positions in UTF-16 code units, line tables and URIs.
#include <doctest/doctest.h>

#include "lsp/Protocol.h"

using namespace tessera::lsp;

TEST_CASE("UTF-16 lengths count astral characters twice") {
  CHECK(utf16Length("abc") == 3);
  CHECK(utf16Length("é") == 1);         // 2 bytes, 1 unit
  CHECK(utf16Length("€") == 1);         // 3 bytes, 1 unit
  CHECK(utf16Length("😀") == 2);        // 4 bytes, 2 units
  CHECK(utf16Length("\xff\xfe") == 2);  // invalid bytes: one unit each
  CHECK(utf16Length("\xf0\x9f") == 1);  // truncated sequence
}

TEST_CASE("UTF-8 prefixes never split a character") {
  std::string s = "a😀b";
  CHECK(utf8PrefixForUTF16(s, 0) == 0);
  CHECK(utf8PrefixForUTF16(s, 1) == 1);
  CHECK(utf8PrefixForUTF16(s, 2) == 1);  // inside the surrogate pair: stays before it
  CHECK(utf8PrefixForUTF16(s, 3) == 5);
  CHECK(utf8PrefixForUTF16(s, 4) == 6);
  CHECK(utf8PrefixForUTF16(s, 99) == 6);
}

TEST_CASE("line table converts offsets and positions both ways") {
  std::string text = "ab\r\n😀x\n\nend";
  LineTable t(text);
  CHECK(t.lineCount() == 4);
  CHECK(t.lineText(0) == "ab");  // without '\r'
  CHECK(t.lineText(1) == "😀x");
  CHECK(*t.offset({1, 2}) == 8);
  CHECK(t.position(8) == Position{1, 2});
  CHECK(t.position(9) == Position{1, 3});
  CHECK(*t.offset({0, 99}) == 2);  // past the end of the line: clamps to its end
  CHECK(!t.offset({4, 0}).has_value());
  CHECK(t.clampedOffset({40, 0}) == text.size());
  CHECK(t.position(static_cast<uint32_t>(text.size()) + 10) == Position{3, 3});
  for (uint32_t off = 0; off <= text.size(); ++off) {
    Position p = t.position(off);
    uint32_t back = *t.offset(p);
    CHECK(back <= off);  // offsets inside a character or a CRLF map to its start
  }
}

TEST_CASE("positions from JSON are validated") {
  CHECK(positionFromJSON(json{{"line", 3}, {"character", 4}}) == Position{3, 4});
  CHECK_THROWS_AS(positionFromJSON(json{{"line", -1}, {"character", 0}}), LSPError);
  CHECK_THROWS_AS(positionFromJSON(json{{"line", "1"}, {"character", 0}}), LSPError);
  CHECK_THROWS_AS(positionFromJSON(json::array()), LSPError);
  CHECK_THROWS_AS(rangeFromJSON(json{{"start", {{"line", 0}, {"character", 0}}}}), LSPError);
}

TEST_CASE("file URIs round-trip with escapes") {
  CHECK(pathToURI("/tmp/a b/k.tessera") == "file:///tmp/a%20b/k.tessera");
  CHECK(*uriToPath("file:///tmp/a%20b/k.tessera") == "/tmp/a b/k.tessera");
  CHECK(*uriToPath("file://localhost/x") == "/x");
  CHECK(!uriToPath("untitled:Untitled-1").has_value());
  CHECK(!uriToPath("file://").has_value());
}

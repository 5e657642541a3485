// Document sync: full and incremental changes, clamping, analysis caching.
#include <doctest/doctest.h>

#include "lsp/Documents.h"

using namespace tessera::lsp;

namespace {
json change(uint32_t l1, uint32_t c1, uint32_t l2, uint32_t c2, const std::string& text) {
  return json{{"range", {{"start", {{"line", l1}, {"character", c1}}}, {"end", {{"line", l2}, {"character", c2}}}}},
              {"text", text}};
}
}  // namespace

TEST_CASE("incremental changes edit the right bytes") {
  DocumentStore store;
  Document& d = store.open("file:///a", "ab😀cd\nsecond\n", 1);
  DocumentStore::applyChange(d, change(0, 4, 0, 5, "X"));  // after the emoji (2 units)
  CHECK(d.text == "ab😀Xd\nsecond\n");
  DocumentStore::applyChange(d, change(0, 5, 1, 3, ""));  // across a line break
  CHECK(d.text == "ab😀Xond\n");
  DocumentStore::applyChange(d, change(9, 0, 12, 0, "tail"));  // past the end: appends
  CHECK(d.text == "ab😀Xond\ntail");
  DocumentStore::applyChange(d, change(0, 1, 0, 0, "-"));  // a reversed range is read start-first
  CHECK(d.text == "-b😀Xond\ntail");
  DocumentStore::applyChange(d, json{{"text", "whole"}});
  CHECK(d.text == "whole");
  CHECK_THROWS_AS(DocumentStore::applyChange(d, json{{"range", "x"}, {"text", "y"}}), LSPError);
  CHECK_THROWS_AS(DocumentStore::applyChange(d, json{{"text", 3}}), LSPError);
  CHECK(d.text == "whole");
}

TEST_CASE("the analysis is rebuilt only after a change") {
  DocumentStore store;
  Document& d = store.open("file:///b", "x = 1\n", 1);
  auto a1 = store.analysisOf(d);
  CHECK(store.analysisOf(d) == a1);
  DocumentStore::applyChange(d, json{{"text", "x = (\n"}});
  auto a2 = store.analysisOf(d);
  CHECK(a2 != a1);
  CHECK(!a2->diagnostics.empty());
  CHECK(a1->diagnostics.empty());  // the old analysis stays valid for whoever holds it
  CHECK(store.close("file:///b"));
  CHECK(!store.close("file:///b"));
  CHECK(store.find("file:///b") == nullptr);
}

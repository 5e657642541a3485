// Half-typed code: every spec example (tests/conformance) and every example kernel (examples/) is
// typed into the server one character at a time through incremental changes. After each
// keystroke the features run at the cursor; every reply must be a result or an expected error
// (formatting and rename may refuse), and the synced text must end up equal to the file.
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ServerTestUtil.h"
#include "lsp/Protocol.h"

using namespace tessera::lsp;
using tessera::lsp::test::Harness;
namespace fs = std::filesystem;

namespace {
fs::path repoRoot() { return fs::path(TESSERA_SOURCE_DIR); }

std::vector<fs::path> exampleFiles() {
  std::vector<fs::path> files;
  for (const char* dir : {"tests/conformance", "examples"}) {
    fs::path d = repoRoot() / dir;
    if (!fs::is_directory(d)) continue;
    for (auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".tessera") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool acceptable(const json& reply, bool mayRefuse) {
  if (reply.is_null()) return false;
  if (reply.contains("result")) return true;
  return mayRefuse && reply.contains("error") && reply["error"]["code"] == ErrorCode::RequestFailed;
}
}  // namespace

TEST_CASE("typing every spec example keystroke by keystroke never fails a request") {
  std::vector<fs::path> files = exampleFiles();
  REQUIRE(files.size() >= 10);
  for (const fs::path& path : files) {
    CAPTURE(path.string());
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    Harness h;
    const std::string uri = "file://" + path.string();
    h.open(uri, "");
    uint32_t line = 0, col = 0;
    int version = 1;
    size_t keystroke = 0;
    for (size_t i = 0; i < text.size();) {
      size_t len = 1;  // whole UTF-8 characters
      while (i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80) ++len;
      std::string ch = text.substr(i, len);
      i += len;
      json range = {{"start", {{"line", line}, {"character", col}}}, {"end", {{"line", line}, {"character", col}}}};
      h.notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", ++version}}},
                                          {"contentChanges", {{{"range", range}, {"text", ch}}}}});
      if (ch == "\n")
        ++line, col = 0;
      else
        col += utf16Length(ch);
      ++keystroke;
      json here = Harness::at(uri, line, col);
      json before = Harness::at(uri, line, col > 0 ? col - 1 : 0);
      CHECK(acceptable(h.request("textDocument/completion", here), false));
      CHECK(acceptable(h.request("textDocument/hover", before), false));
      CHECK(acceptable(h.request("textDocument/signatureHelp", here), false));
      CHECK(acceptable(h.request("textDocument/semanticTokens/full", {{"textDocument", {{"uri", uri}}}}), false));
      if (keystroke % 4 == 0) {
        json whole = {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", line + 1}, {"character", 0}}}};
        CHECK(acceptable(h.request("textDocument/definition", before), false));
        CHECK(acceptable(h.request("textDocument/documentHighlight", before), false));
        json refs = before;
        refs["context"] = {{"includeDeclaration", true}};
        CHECK(acceptable(h.request("textDocument/references", refs), false));
        CHECK(acceptable(h.request("textDocument/prepareRename", before), true));
        CHECK(acceptable(h.request("textDocument/documentSymbol", {{"textDocument", {{"uri", uri}}}}), false));
        CHECK(acceptable(h.request("textDocument/foldingRange", {{"textDocument", {{"uri", uri}}}}), false));
        CHECK(acceptable(h.request("textDocument/inlayHint", {{"textDocument", {{"uri", uri}}}, {"range", whole}}),
                         false));
        CHECK(acceptable(h.request("textDocument/codeAction", {{"textDocument", {{"uri", uri}}}, {"range", whole}}),
                         false));
        CHECK(acceptable(h.request("textDocument/formatting", {{"textDocument", {{"uri", uri}}}}), true));
      }
    }
    Document* d = h.server.documents().find(uri);
    REQUIRE(d != nullptr);
    CHECK(d->text == text);
    // The finished file: diagnostics as the compiler gives them, and a formatting reply.
    CHECK(acceptable(h.request("textDocument/formatting", {{"textDocument", {{"uri", uri}}}}), false));
  }
}

// Fuzzes the language server's message layer and features: the bytes are (1) a stream of
// Content-Length frames read by the transport and handed to the server, (2) one raw message
// body, and (3) the text of an open document on which every feature runs at positions taken
// from the input. Any input must give replies or JSON-RPC errors, never a crash, hang or
// sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lsp/Server.h"
#include "lsp/Transport.h"

using namespace tessera::lsp;

namespace {
json request(int id, const std::string& method, json params) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  size_t replies = 0;
  auto sink = [&](const json& msg) {
    // Serialising must work for every reply (invalid UTF-8 in the input is replaced).
    replies += msg.dump(-1, ' ', false, json::error_handler_t::replace).size() > 0;
  };

  // (1) Framed stream, after a normal start so requests reach the handlers.
  {
    Server server(sink, ServerOptions{0});
    server.handle(request(0, "initialize", json::object()));
    std::string buffer = input, body;
    for (int i = 0; i < 1000; ++i) {
      auto st = MessageReader::extract(buffer, InputStyle::Standard, true, body);
      if (st == MessageReader::Status::Message)
        server.handleRaw(body);
      else if (st == MessageReader::Status::Malformed)
        server.handleBadFrame(body);
      else
        break;
    }
    // The delimited style too.
    buffer = input;
    for (int i = 0; i < 1000; ++i) {
      auto st = MessageReader::extract(buffer, InputStyle::Delimited, true, body);
      if (st == MessageReader::Status::Message)
        server.handleRaw(body);
      else
        break;
    }
  }

  // (2) The whole input as one body, before and after initialize.
  {
    Server server(sink, ServerOptions{0});
    server.handleRaw(input);
    server.handle(request(0, "initialize", json::object()));
    server.handleRaw(input);
  }

  // (3) The input as a document, every feature at positions the input picks.
  {
    Server server(sink, ServerOptions{0});
    server.handle(request(0, "initialize", json::object()));
    const std::string uri = "file:///fuzz.tessera";
    server.handle(json{{"jsonrpc", "2.0"},
                       {"method", "textDocument/didOpen"},
                       {"params", {{"textDocument", {{"uri", uri}, {"version", 1}, {"text", json(input)}}}}}});
    if (server.documents().find(uri) == nullptr) return 0;  // not valid UTF-8 for the JSON layer
    json td = {{"uri", uri}};
    const char* methods[] = {"textDocument/hover",         "textDocument/completion",
                             "textDocument/definition",    "textDocument/documentHighlight",
                             "textDocument/signatureHelp", "textDocument/prepareRename"};
    for (size_t k = 0; k < 4 && k < size; ++k) {
      unsigned line = data[k] % 16, ch = (size > k + 4 ? data[k + 4] : 0) % 64;
      json pos = {{"line", line}, {"character", ch}};
      int id = 1;
      for (const char* m : methods) server.handle(request(id++, m, {{"textDocument", td}, {"position", pos}}));
      server.handle(request(id++, "textDocument/references",
                            {{"textDocument", td}, {"position", pos}, {"context", {{"includeDeclaration", true}}}}));
      server.handle(
          request(id++, "textDocument/rename", {{"textDocument", td}, {"position", pos}, {"newName", "renamed"}}));
    }
    json whole = {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 100000}, {"character", 0}}}};
    server.handle(request(20, "textDocument/documentSymbol", {{"textDocument", td}}));
    server.handle(request(21, "textDocument/semanticTokens/full", {{"textDocument", td}}));
    server.handle(request(22, "textDocument/foldingRange", {{"textDocument", td}}));
    server.handle(request(23, "textDocument/formatting", {{"textDocument", td}}));
    server.handle(request(24, "textDocument/inlayHint", {{"textDocument", td}, {"range", whole}}));
    server.handle(request(25, "textDocument/codeAction", {{"textDocument", td}, {"range", whole}}));
    server.handle(request(26, "workspace/symbol", {{"query", input.substr(0, 3)}}));
    // An incremental edit in the middle, then the features again.
    if (size > 2) {
      json range = {{"start", {{"line", data[0] % 8}, {"character", data[1] % 32}}},
                    {"end", {{"line", data[1] % 8}, {"character", data[2] % 32}}}};
      server.handle(json{{"jsonrpc", "2.0"},
                         {"method", "textDocument/didChange"},
                         {"params",
                          {{"textDocument", {{"uri", uri}, {"version", 2}}},
                           {"contentChanges", {{{"range", range}, {"text", "tile.("}}}}}}});
      server.handle(request(30, "textDocument/completion", {{"textDocument", td}, {"position", range["start"]}}));
      server.handle(request(31, "textDocument/semanticTokens/full", {{"textDocument", td}}));
    }
  }
  (void)replies;
  return 0;
}

// A server with captured output for the unit tests.
#pragma once

#include <string>
#include <vector>

#include "lsp/Server.h"

namespace tessera::lsp::test {

struct Harness {
  std::vector<json> out;
  Server server{[this](const json& m) { out.push_back(m); }, ServerOptions{0}};
  int nextId = 100;

  Harness() { request("initialize", json::object()); }
  // Sends a request and returns its reply (the last message with its id).
  json request(const std::string& method, json params) {
    int id = nextId++;
    server.handle(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    for (auto it = out.rbegin(); it != out.rend(); ++it)
      if (it->contains("id") && (*it)["id"] == id) return *it;
    return nullptr;
  }
  void notify(const std::string& method, json params) {
    server.handle(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  void open(const std::string& uri, const std::string& text, int version = 1) {
    notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"version", version}, {"text", text}}}});
  }
  static json at(const std::string& uri, uint32_t line, uint32_t ch) {
    return json{{"textDocument", {{"uri", uri}}}, {"position", {{"line", line}, {"character", ch}}}};
  }
  // The last publishDiagnostics for `uri`.
  json lastDiagnostics(const std::string& uri) const {
    for (auto it = out.rbegin(); it != out.rend(); ++it)
      if (it->value("method", "") == "textDocument/publishDiagnostics" && (*it)["params"]["uri"] == uri)
        return (*it)["params"];
    return nullptr;
  }
};

}  // namespace tessera::lsp::test

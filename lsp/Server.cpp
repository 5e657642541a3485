#include "lsp/Server.h"

#include <algorithm>

#include "lsp/Features.h"

namespace tessera::lsp {

namespace {
const json& member(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key))
    throw LSPError(ErrorCode::InvalidParams, std::string("missing '") + key + "'");
  return j[key];
}
const std::string& stringMember(const json& j, const char* key) {
  const json& v = member(j, key);
  if (!v.is_string()) throw LSPError(ErrorCode::InvalidParams, std::string("'") + key + "' must be a string");
  return v.get_ref<const std::string&>();
}
int64_t versionOf(const json& td) {
  if (td.is_object() && td.contains("version") && td["version"].is_number_integer())
    return td["version"].get<int64_t>();
  return 0;
}
}  // namespace

Server::Server(Output out, ServerOptions opts) : out_(std::move(out)), opts_(opts) {
  requests_ = {
      {"initialize", &Server::onInitialize},
      {"shutdown", &Server::onShutdown},
      {"textDocument/hover", &Server::onHover},
      {"textDocument/completion", &Server::onCompletion},
      {"textDocument/definition", &Server::onDefinition},
      {"textDocument/references", &Server::onReferences},
      {"textDocument/documentHighlight", &Server::onDocumentHighlight},
      {"textDocument/documentSymbol", &Server::onDocumentSymbol},
      {"workspace/symbol", &Server::onWorkspaceSymbol},
      {"textDocument/signatureHelp", &Server::onSignatureHelp},
      {"textDocument/semanticTokens/full", &Server::onSemanticTokens},
      {"textDocument/foldingRange", &Server::onFoldingRange},
      {"textDocument/prepareRename", &Server::onPrepareRename},
      {"textDocument/rename", &Server::onRename},
      {"textDocument/formatting", &Server::onFormatting},
      {"textDocument/inlayHint", &Server::onInlayHint},
      {"textDocument/codeAction", &Server::onCodeAction},
  };
  notifications_ = {
      {"initialized", &Server::onInitialized},
      {"textDocument/didOpen", &Server::onDidOpen},
      {"textDocument/didChange", &Server::onDidChange},
      {"textDocument/didClose", &Server::onDidClose},
  };
}

void Server::reply(const json& id, json result) {
  out_(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void Server::replyError(const json& id, int code, const std::string& message) {
  out_(json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

void Server::notify(const std::string& method, json params) {
  out_(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

void Server::handleRaw(std::string_view body) {
  unsigned replaced = 0;
  std::string clean = replaceLoneSurrogates(body, replaced);
  json msg = json::parse(clean.begin(), clean.end(), nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded()) {
    replyError(nullptr, ErrorCode::ParseError, "the message is not valid JSON");
    return;
  }
  if (replaced) {
    // The message is handled (so that the document stays in step with the editor), and the
    // editor is told what was changed.
    std::string method = msg.is_object() && msg.contains("method") && msg["method"].is_string()
                             ? msg["method"].get<std::string>()
                             : std::string("a message");
    notify("window/showMessage",
           {{"type", 1},
            {"message", method + ": " + std::to_string(replaced) +
                            " unpaired UTF-16 surrogate(s) in the text, which is not valid Unicode; each is read as "
                            "U+FFFD (the replacement character)"}});
  }
  handle(msg);
}

void Server::handleBadFrame(const std::string& why) { replyError(nullptr, ErrorCode::ParseError, why); }

void Server::handle(const json& msg) {
  if (msg.is_array()) {  // JSON-RPC batches are not part of LSP
    replyError(nullptr, ErrorCode::InvalidRequest, "batch messages are not supported");
    return;
  }
  if (!msg.is_object()) {
    replyError(nullptr, ErrorCode::InvalidRequest, "a message must be a JSON object");
    return;
  }
  json id = nullptr;
  bool isRequest = msg.contains("id");
  if (isRequest) {
    id = msg["id"];
    if (!id.is_number_integer() && !id.is_string()) {
      replyError(nullptr, ErrorCode::InvalidRequest, "'id' must be an integer or a string");
      return;
    }
  }
  if (!msg.contains("method")) {
    // A response to a request of ours (we send none that need answers) or garbage.
    if (!isRequest || (!msg.contains("result") && !msg.contains("error")))
      replyError(id, ErrorCode::InvalidRequest, "a request needs a 'method'");
    return;
  }
  if (!msg["method"].is_string()) {
    if (isRequest) replyError(id, ErrorCode::InvalidRequest, "'method' must be a string");
    return;
  }
  const std::string& method = msg["method"].get_ref<const std::string&>();
  static const json empty = json::object();
  const json& params = msg.contains("params") ? msg["params"] : empty;

  if (!isRequest) {
    if (method == "exit") {
      exit_ = true;
      return;
    }
    if (!initialized_ || shutdown_) return;
    auto it = notifications_.find(method);
    if (it == notifications_.end()) return;  // unknown notifications ($/cancelRequest, ...) are ignored
    try {
      (this->*(it->second))(params);
    } catch (const std::exception& e) {
      // A notification has no reply: tell the editor with a message instead of dropping it
      // silently (after a failed change, the document may differ from the editor's).
      std::string what = method + " failed: " + e.what();
      if (method == "textDocument/didChange")
        what += "; the server's copy of the document may now differ from the editor's (close and reopen it)";
      notify("window/showMessage", {{"type", 1}, {"message", what}});
    }
    return;
  }

  if (!initialized_ && method != "initialize") {
    replyError(id, ErrorCode::ServerNotInitialized, "the server has not been initialized");
    return;
  }
  if (shutdown_) {
    replyError(id, ErrorCode::InvalidRequest, "the server is shutting down");
    return;
  }
  auto it = requests_.find(method);
  if (it == requests_.end()) {
    replyError(id, ErrorCode::MethodNotFound, "method not found: " + method);
    return;
  }
  try {
    json result = (this->*(it->second))(params);
    reply(id, std::move(result));
  } catch (const LSPError& e) {
    replyError(id, e.code, e.what());
  } catch (const json::exception& e) {
    replyError(id, ErrorCode::InvalidParams, std::string("invalid params: ") + e.what());
  } catch (const std::exception& e) {
    replyError(id, ErrorCode::InternalError, std::string("internal error: ") + e.what());
  }
}

// ---------------------------------------------------------------- lifecycle

json Server::onInitialize(const json& params) {
  if (initialized_) throw LSPError(ErrorCode::InvalidRequest, "the server is already initialized");
  initialized_ = true;
  // Remarks (-Rpass) as hints: the client asks with initializationOptions {"remarks": true}.
  bool remarks = opts_.remarks;
  if (params.is_object() && params.contains("initializationOptions")) {
    const json& o = params["initializationOptions"];
    if (o.is_object() && o.contains("remarks") && o["remarks"].is_boolean()) remarks = o["remarks"].get<bool>();
  }
  if (remarks) docs_.remarks = opts_.remarkProvider;
  json caps = {
      {"positionEncoding", "utf-16"},
      {"textDocumentSync", {{"openClose", true}, {"change", 2}}},
      {"hoverProvider", true},
      {"completionProvider", {{"triggerCharacters", {"."}}, {"resolveProvider", false}}},
      {"signatureHelpProvider", {{"triggerCharacters", {"(", ","}}, {"retriggerCharacters", {","}}}},
      {"definitionProvider", true},
      {"referencesProvider", true},
      {"documentHighlightProvider", true},
      {"documentSymbolProvider", true},
      {"workspaceSymbolProvider", true},
      {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}},
      {"documentFormattingProvider", true},
      {"renameProvider", {{"prepareProvider", true}}},
      {"foldingRangeProvider", true},
      {"semanticTokensProvider", {{"legend", semanticTokensLegend()}, {"full", true}, {"range", false}}},
      {"inlayHintProvider", true},
  };
  return json{{"capabilities", caps}, {"serverInfo", {{"name", "tessera-lsp"}, {"version", "0.1.0"}}}};
}

json Server::onShutdown(const json&) {
  shutdown_ = true;
  return nullptr;
}

void Server::onInitialized(const json&) {}

// ---------------------------------------------------------------- document sync

void Server::onDidOpen(const json& params) {
  const json& td = member(params, "textDocument");
  const std::string& uri = stringMember(td, "uri");
  Document& d = docs_.open(uri, stringMember(td, "text"), versionOf(td));
  pending_.erase(uri);
  publishDiagnostics(d);
}

void Server::onDidChange(const json& params) {
  const json& td = member(params, "textDocument");
  Document* d = docs_.find(stringMember(td, "uri"));
  if (!d) return;  // a change to a document never opened
  const json& changes = member(params, "contentChanges");
  if (!changes.is_array()) throw LSPError(ErrorCode::InvalidParams, "'contentChanges' must be an array");
  for (const json& c : changes) DocumentStore::applyChange(*d, c);
  d->version = versionOf(td);
  if (opts_.debounceMs <= 0) {
    publishDiagnostics(*d);
  } else {
    pending_[d->uri] = Clock::now() + std::chrono::milliseconds(opts_.debounceMs);
  }
}

void Server::onDidClose(const json& params) {
  const std::string& uri = stringMember(member(params, "textDocument"), "uri");
  pending_.erase(uri);
  if (docs_.close(uri)) notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
}

void Server::publishDiagnostics(Document& doc) {
  auto a = docs_.analysisOf(doc);
  notify("textDocument/publishDiagnostics",
         {{"uri", doc.uri}, {"version", doc.version}, {"diagnostics", diagnosticsJSON(*a)}});
}

int Server::msUntilDue() const {
  if (pending_.empty()) return -1;
  auto next = std::min_element(pending_.begin(), pending_.end(), [](const auto& x, const auto& y) {
                return x.second < y.second;
              })->second;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
  return ms < 0 ? 0 : static_cast<int>(ms);
}

void Server::runDue(bool all) {
  auto now = Clock::now();
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (all || it->second <= now) {
      if (Document* d = docs_.find(it->first)) publishDiagnostics(*d);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

// ---------------------------------------------------------------- requests

Document& Server::documentFor(const json& params) {
  const std::string& uri = stringMember(member(params, "textDocument"), "uri");
  Document* d = docs_.find(uri);
  if (!d) throw LSPError(ErrorCode::InvalidParams, "the document is not open: " + uri);
  return *d;
}

std::shared_ptr<const Analysis> Server::analysisFor(const json& params) {
  return docs_.analysisOf(documentFor(params));
}

uint32_t Server::offsetFor(const Analysis& a, const json& params) {
  return a.offsetFor(positionFromJSON(member(params, "position")));
}

json Server::onHover(const json& params) {
  auto a = analysisFor(params);
  return hover(*a, offsetFor(*a, params));
}
json Server::onCompletion(const json& params) {
  Document& d = documentFor(params);
  Position p = positionFromJSON(member(params, "position"));
  if (!LineTable(d.text).offset(p))
    throw LSPError(ErrorCode::InvalidParams, "line " + std::to_string(p.line) + " is past the end of the document");
  std::shared_ptr<const Analysis> a = d.analysis ? d.analysis : d.last;
  if (!a) a = docs_.analysisOf(d);
  return completion(*a, d.text, p);
}
json Server::onDefinition(const json& params) {
  auto a = analysisFor(params);
  return definition(*a, offsetFor(*a, params));
}
json Server::onReferences(const json& params) {
  auto a = analysisFor(params);
  bool includeDecl = true;
  if (params.contains("context") && params["context"].is_object() && params["context"].contains("includeDeclaration"))
    includeDecl = params["context"]["includeDeclaration"].get<bool>();
  return references(*a, offsetFor(*a, params), includeDecl);
}
json Server::onDocumentHighlight(const json& params) {
  auto a = analysisFor(params);
  return documentHighlights(*a, offsetFor(*a, params));
}
json Server::onDocumentSymbol(const json& params) { return documentSymbols(*analysisFor(params)); }
json Server::onWorkspaceSymbol(const json& params) {
  std::string query;
  if (params.contains("query") && params["query"].is_string()) query = params["query"].get<std::string>();
  std::vector<std::shared_ptr<const Analysis>> all;
  for (auto& [uri, doc] : docs_.all()) all.push_back(docs_.analysisOf(const_cast<Document&>(doc)));
  return workspaceSymbols(all, query);
}
json Server::onSignatureHelp(const json& params) {
  auto a = analysisFor(params);
  return signatureHelp(*a, offsetFor(*a, params));
}
json Server::onSemanticTokens(const json& params) { return semanticTokens(*analysisFor(params)); }
json Server::onFoldingRange(const json& params) { return foldingRanges(*analysisFor(params)); }
json Server::onPrepareRename(const json& params) {
  auto a = analysisFor(params);
  return prepareRename(*a, offsetFor(*a, params));
}
json Server::onRename(const json& params) {
  auto a = analysisFor(params);
  return rename(*a, offsetFor(*a, params), stringMember(params, "newName"));
}
json Server::onFormatting(const json& params) { return formattingEdits(*analysisFor(params)); }
json Server::onInlayHint(const json& params) {
  auto a = analysisFor(params);
  return inlayHints(*a, rangeFromJSON(member(params, "range")));
}
json Server::onCodeAction(const json& params) {
  auto a = analysisFor(params);
  return codeActions(*a, rangeFromJSON(member(params, "range")));
}

}  // namespace tessera::lsp

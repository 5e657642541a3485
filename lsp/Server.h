// The server: JSON-RPC dispatch, the lifecycle (initialize, shutdown, exit), document sync and
// debounced diagnostics. Transport-independent: messages come in through handle(), replies and
// notifications go out through the Output callback (main.cpp frames them on stdout; the tests
// and the fuzz target capture them).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "lsp/Documents.h"
#include "lsp/Protocol.h"

namespace tessera::lsp {

struct ServerOptions {
  int debounceMs = 50;  // diagnostics after a change wait this long for the next change; 0: at once
  // Code generation's remarks as hints: what computes them (the driver's), and whether they are
  // on before the client says (initializationOptions {"remarks": true | false}).
  RemarkProvider remarkProvider;
  bool remarks = false;
};

class Server {
 public:
  using Output = std::function<void(const json&)>;
  using Clock = std::chrono::steady_clock;

  explicit Server(Output out, ServerOptions opts = {});

  // One message body as received: malformed JSON is answered with a ParseError.
  void handleRaw(std::string_view body);
  // A frame the transport could not read (answered with a ParseError, id null).
  void handleBadFrame(const std::string& why);
  void handle(const json& message);

  // Debounced diagnostics: milliseconds until the next one is due (-1: none pending), and
  // publishing those that are due (all of them with `all`).
  int msUntilDue() const;
  void runDue(bool all = false);

  bool exitRequested() const { return exit_; }
  int exitCode() const { return shutdown_ ? 0 : 1; }
  DocumentStore& documents() { return docs_; }

 private:
  using Handler = json (Server::*)(const json& params);
  void reply(const json& id, json result);
  void replyError(const json& id, int code, const std::string& message);
  void notify(const std::string& method, json params);
  void publishDiagnostics(Document& doc);

  Document& documentFor(const json& params);
  std::shared_ptr<const Analysis> analysisFor(const json& params);
  uint32_t offsetFor(const Analysis& a, const json& params);

  // Lifecycle and sync
  json onInitialize(const json& params);
  json onShutdown(const json& params);
  void onInitialized(const json& params);
  void onDidOpen(const json& params);
  void onDidChange(const json& params);
  void onDidClose(const json& params);
  // Requests
  json onHover(const json& params);
  json onCompletion(const json& params);
  json onDefinition(const json& params);
  json onReferences(const json& params);
  json onDocumentHighlight(const json& params);
  json onDocumentSymbol(const json& params);
  json onWorkspaceSymbol(const json& params);
  json onSignatureHelp(const json& params);
  json onSemanticTokens(const json& params);
  json onFoldingRange(const json& params);
  json onPrepareRename(const json& params);
  json onRename(const json& params);
  json onFormatting(const json& params);
  json onInlayHint(const json& params);
  json onCodeAction(const json& params);

  Output out_;
  ServerOptions opts_;
  DocumentStore docs_;
  std::map<std::string, Handler> requests_;
  std::map<std::string, void (Server::*)(const json&)> notifications_;
  std::map<std::string, Clock::time_point> pending_;  // uri -> when its diagnostics are due
  bool initialized_ = false, shutdown_ = false, exit_ = false;
};

}  // namespace tessera::lsp

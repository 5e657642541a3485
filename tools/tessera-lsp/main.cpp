// tessera-lsp: the Tessera language server (LSP 3.17 over stdio). A thin driver over the
// tessera_lsp library (lsp/): it reads messages, hands them to the server, and frames replies.
//
//   --input-style=delimited   messages separated by '---' lines ('#' lines are comments), as
//                             clangd's lit tests feed them
//   --pretty                  indent the JSON written (tests)
//   --debounce-ms=N           delay of diagnostics after a change (default 50; 0: at once)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "lsp/Server.h"
#include "lsp/Transport.h"

using namespace tessera::lsp;

int main(int argc, char** argv) {
  InputStyle style = InputStyle::Standard;
  bool pretty = false;
  ServerOptions opts;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--input-style=delimited") style = InputStyle::Delimited;
    else if (a == "--input-style=standard") style = InputStyle::Standard;
    else if (a == "--pretty") pretty = true;
    else if (a.substr(0, 14) == "--debounce-ms=") opts.debounceMs = std::atoi(std::string(a.substr(14)).c_str());
    else if (a == "--stdio") continue;  // what editors pass; stdio is the only transport
    else if (a == "-h" || a == "--help") {
      std::puts("usage: tessera-lsp [--stdio] [--input-style=standard|delimited] [--pretty] [--debounce-ms=N]");
      return 0;
    } else {
      std::fprintf(stderr, "tessera-lsp: unknown option '%s'\n", argv[i]);
      return 1;
    }
  }
  std::ios::sync_with_stdio(false);
  Server server(
      [&](const json& msg) {
        std::string body = msg.dump(pretty ? 2 : -1, ' ', false, json::error_handler_t::replace);
        std::string framed = frameMessage(body);
        if (pretty) framed += "\n";
        std::fwrite(framed.data(), 1, framed.size(), stdout);
        std::fflush(stdout);
      },
      opts);
  MessageReader reader(STDIN_FILENO, style);
  std::string body;
  for (;;) {
    auto status = reader.read(body, server.msUntilDue());
    switch (status) {
      case MessageReader::Status::Message: server.handleRaw(body); break;
      case MessageReader::Status::Malformed: server.handleBadFrame(body); break;
      case MessageReader::Status::Timeout: server.runDue(); break;
      case MessageReader::Status::End:
        server.runDue(true);
        return server.exitCode();
    }
    if (server.exitRequested()) return server.exitCode();
    server.runDue();
  }
}

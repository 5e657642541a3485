// tessera-lsp: the Tessera language server (LSP 3.17 over stdio). A thin driver over the
// tessera_lsp library (lsp/): it reads messages, hands them to the server, and frames replies.
//
//   --input-style=delimited   messages separated by '---' lines ('#' lines are comments), as
//                             clangd's lit tests feed them
//   --pretty                  indent the JSON written (tests)
//   --debounce-ms=N           delay of diagnostics after a change (default 50; 0: at once)
//   --remarks                 code generation's remarks (-Rpass) as hints
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <pthread.h>
#include <string>
#include <string_view>
#include <unistd.h>

#include "lsp/Server.h"
#include "lsp/Transport.h"
#include "tools/tessera-lsp/Remarks.h"

using namespace tessera::lsp;

namespace {
struct Args {
  int argc;
  char** argv;
  int status = 0;
};
int serve(int argc, char** argv);
void* serveThread(void* p) {
  auto* a = static_cast<Args*>(p);
  a->status = serve(a->argc, a->argv);
  return nullptr;
}
}  // namespace

// The server runs on a thread with a 1 GiB stack (reserved, committed only as used): the
// recursive-descent parser and the tree walks recurse once per nesting level, and a document
// nested 100,000 levels deep must not overflow the 8 MiB of the main thread.
int main(int argc, char** argv) {
  Args args{argc, argv};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t(1) << 30);
  pthread_t thread;
  if (pthread_create(&thread, &attr, serveThread, &args) != 0) return serve(argc, argv);
  pthread_join(thread, nullptr);
  return args.status;
}

namespace {
int serve(int argc, char** argv) {
  InputStyle style = InputStyle::Standard;
  bool pretty = false;
  ServerOptions opts;
  opts.remarkProvider = addCodegenRemarks;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--input-style=delimited")
      style = InputStyle::Delimited;
    else if (a == "--input-style=standard")
      style = InputStyle::Standard;
    else if (a == "--pretty")
      pretty = true;
    else if (a.substr(0, 14) == "--debounce-ms=")
      opts.debounceMs = std::atoi(std::string(a.substr(14)).c_str());
    else if (a == "--remarks")
      opts.remarks = true;
    else if (a == "--stdio")
      continue;  // what editors pass; stdio is the only transport
    else if (a == "-h" || a == "--help") {
      std::puts(
          "usage: tessera-lsp [--stdio] [--input-style=standard|delimited] [--pretty] [--debounce-ms=N] [--remarks]");
      return 0;
    } else {
      std::fprintf(stderr, "tessera-lsp: unknown option '%s'\n", argv[i]);
      return 1;
    }
  }
  std::signal(SIGPIPE, SIG_IGN);  // a client that went away ends the loop through EOF, not a signal
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
      case MessageReader::Status::End: server.runDue(true); return server.exitCode();
    }
    if (server.exitRequested()) return server.exitCode();
    server.runDue();
  }
}
}  // namespace

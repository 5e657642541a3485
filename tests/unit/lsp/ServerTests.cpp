// The server through its message interface: lifecycle, errors, and the features on one kernel.
#include <doctest/doctest.h>

#include "ServerTestUtil.h"

using namespace tessera::lsp;
using tessera::lsp::test::Harness;

namespace {
const char* kKernel =
    "@kernel tile[(128,)] shared(8_KiB)\n"
    "def axpy(alpha: f32, x: f32[n], y: mut f32[n]):\n"
    "    i = tile.linear_id()\n"
    "    y[i] = alpha * x[i] + y[i]\n";
}

TEST_CASE("malformed input gets JSON-RPC errors, not crashes") {
  Harness h;
  h.server.handleRaw("{oops");
  CHECK(h.out.back()["error"]["code"] == ErrorCode::ParseError);
  h.server.handleRaw("\"just a string\"");
  CHECK(h.out.back()["error"]["code"] == ErrorCode::InvalidRequest);
  h.server.handleRaw("");
  CHECK(h.out.back()["error"]["code"] == ErrorCode::ParseError);
  CHECK(h.request("no/such/method", json::object())["error"]["code"] == ErrorCode::MethodNotFound);
  CHECK(h.request("textDocument/hover", json::object())["error"]["code"] == ErrorCode::InvalidParams);
  CHECK(h.request("textDocument/hover", Harness::at("file:///nope", 0, 0))["error"]["code"] ==
        ErrorCode::InvalidParams);
  size_t before = h.out.size();
  // A malformed notification has no reply: the editor is told with window/showMessage.
  h.notify("textDocument/didChange", json::array());
  REQUIRE(h.out.size() == before + 1);
  CHECK(h.out.back()["method"] == "window/showMessage");
  CHECK(h.out.back()["params"]["type"] == 1);
  CHECK(h.out.back()["params"]["message"].get<std::string>().rfind("textDocument/didChange failed", 0) == 0);
  h.notify("$/setTrace", {{"value", "off"}});  // a well-formed notification: no output
  CHECK(h.out.size() == before + 1);
}

TEST_CASE("a kernel: diagnostics, hover, definition, completion") {
  Harness h;
  h.open("file:///k.tessera", kKernel);
  CHECK(h.lastDiagnostics("file:///k.tessera")["diagnostics"].empty());
  json hover = h.request("textDocument/hover", Harness::at("file:///k.tessera", 3, 19));
  CHECK(hover["result"]["contents"]["value"] == "```tessera\n(parameter) x: f32[n]\n```");
  json def = h.request("textDocument/definition", Harness::at("file:///k.tessera", 3, 19));
  CHECK(def["result"][0]["range"]["start"] == json{{"line", 1}, {"character", 21}});
  json comp = h.request("textDocument/completion", Harness::at("file:///k.tessera", 2, 13));
  bool hasLinearId = false;
  for (const json& item : comp["result"]["items"]) hasLinearId |= item["label"] == "linear_id";
  CHECK(hasLinearId);
}

TEST_CASE("out-of-range positions: past the last line is an error, past a line's end clamps") {
  Harness h;
  h.open("file:///k.tessera", kKernel);
  for (const char* m : {"textDocument/hover", "textDocument/completion", "textDocument/definition",
                        "textDocument/signatureHelp", "textDocument/documentHighlight"}) {
    CAPTURE(m);
    CHECK(h.request(m, Harness::at("file:///k.tessera", 400, 0))["error"]["code"] == ErrorCode::InvalidParams);
    CHECK(h.request(m, Harness::at("file:///k.tessera", 1, 4000)).contains("result"));
    CHECK(h.request(m, Harness::at("file:///k.tessera", 4, 0)).contains("result"));  // the empty last line
  }
}

TEST_CASE("every request before initialize fails; exit code follows shutdown") {
  Server s([](const json&) {});
  Harness h;
  CHECK(h.request("shutdown", nullptr)["result"].is_null());
  h.notify("exit", nullptr);
  CHECK(h.server.exitRequested());
  CHECK(h.server.exitCode() == 0);
  std::vector<json> out;
  Server fresh([&](const json& m) { out.push_back(m); });
  fresh.handle(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "textDocument/hover"}, {"params", json::object()}});
  CHECK(out.back()["error"]["code"] == ErrorCode::ServerNotInitialized);
  fresh.handle(json{{"jsonrpc", "2.0"}, {"method", "exit"}});
  CHECK(fresh.exitCode() == 1);
}

TEST_CASE("debounced diagnostics wait for the deadline") {
  std::vector<json> out;
  Server s([&](const json& m) { out.push_back(m); }, ServerOptions{50});
  s.handle(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", json::object()}});
  s.handle(json{{"jsonrpc", "2.0"},
                {"method", "textDocument/didOpen"},
                {"params", {{"textDocument", {{"uri", "file:///d"}, {"version", 1}, {"text", "x = 1\n"}}}}}});
  size_t afterOpen = out.size();
  CHECK(s.msUntilDue() == -1);
  s.handle(
      json{{"jsonrpc", "2.0"},
           {"method", "textDocument/didChange"},
           {"params",
            {{"textDocument", {{"uri", "file:///d"}, {"version", 2}}}, {"contentChanges", {{{"text", "x = y\n"}}}}}}});
  CHECK(out.size() == afterOpen);
  int due = s.msUntilDue();
  CHECK(due >= 0);
  CHECK(due <= 50);
  s.runDue();  // not yet due (unless the machine is very slow)
  s.runDue(true);
  CHECK(out.size() == afterOpen + 1);
  CHECK(out.back()["params"]["version"] == 2);
  CHECK(out.back()["params"]["diagnostics"].size() == 1);
  CHECK(s.msUntilDue() == -1);
}

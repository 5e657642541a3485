// The diagnostics engine and its printers: message formatting, the error limit, the clang-style
// text layout (caret and underline), and the JSON form.
#include <doctest/doctest.h>
#include <sstream>

#include "basic/Diagnostics.h"
#include "basic/Remarks.h"
#include "frontend/FrontendDiagnostics.h"
#include "tests/unit/DiagnosticTableCheck.h"

using namespace tessera;

namespace {
struct Fixture {
  SourceManager sm;
  FileID file = sm.addBuffer("t.tessera", "def f(x):\n\ty = x +\n");
  SourceLoc at(uint32_t off) { return sm.locAt(file, off); }
};
}  // namespace

TEST_CASE("formatMessage substitutes numbered placeholders") {
  CHECK(formatMessage("expected {0} after {1}", {"':'", "'if'"}) == "expected ':' after 'if'");
  CHECK(formatMessage("{1}{0}{1}", {"a", "b"}) == "bab");
  CHECK(formatMessage("missing {3}", {"a"}) == "missing <?>");
  CHECK(formatMessage("no placeholders {x}", {}) == "no placeholders {x}");
}

TEST_CASE("every registry entry of the driver, scanner and parser has a name, a message and its severity") {
  checkDiagnosticTable(kDriverDiagnostics, diag::NumDriverDiagnostics);
  checkDiagnosticTable(kLexDiagnostics, diag::NumLexDiagnostics);
  checkDiagnosticTable(kParseDiagnostics, diag::NumParseDiagnostics);
}

TEST_CASE("every remark has a pass and a kind, and the filter selects remarks by kind and pass") {
  checkDiagnosticTable(kRemarkDiagnostics, diag::NumRemarks);
  for (size_t i = 0; i < diag::NumRemarks; ++i) {
    CAPTURE(kRemarkDiagnostics[i].name);
    CHECK(kRemarkDiagnostics[i].remarkPass != nullptr);
    CHECK(kRemarkDiagnostics[i].remarkKind != RemarkKind::None);
  }
  CHECK(remarkPassNames() == "pipeline, tile-registers, vectorize, tensor-cores");
  CHECK(remarkFlag(diagInfo(diag::remark_not_vectorized)) == "-Rpass-missed=vectorize");

  Fixture f;
  DiagnosticEngine engine(f.sm);
  StoringDiagnosticConsumer store;
  engine.addConsumer(&store);
  engine.report(diag::remark_pipelined, f.at(0)) << "3" << "2";
  CHECK(store.diagnostics.empty());  // no filter: no remark
  auto filter = std::make_shared<RemarkFilter>();
  std::string error;
  CHECK(filter->set(RemarkKind::Passed, "pipe|vec", error));
  CHECK_FALSE(filter->set(RemarkKind::Missed, "(", error));
  CHECK(error.find("invalid regular expression '('") == 0);
  engine.setRemarkFilter(filter);
  engine.report(diag::remark_pipelined, f.at(0)) << "3" << "2";
  engine.report(diag::remark_vectorized_tiles, f.at(0)) << "k" << "4";
  engine.report(diag::remark_not_pipelined, f.at(0)) << "why";      // missed: not asked for
  engine.report(diag::remark_tensor_cores_mma, f.at(0)) << "bf16";  // another pass
  REQUIRE(store.diagnostics.size() == 2);
  CHECK(store.diagnostics[0].id == diag::remark_pipelined);
  CHECK(store.diagnostics[0].message.find("3 stages") != std::string::npos);
  CHECK(store.diagnostics[1].id == diag::remark_vectorized_tiles);
  CHECK(engine.remarkEnabled(diag::err_drv_cannot_open));  // not a remark: always
  CHECK_FALSE(engine.remarkEnabled(diag::remark_no_wgmma));

  std::ostringstream os;
  TextDiagnosticPrinter text(os, f.sm, false);
  text.handle(store.diagnostics[1]);
  CHECK(os.str().find("remark: kernel 'k': accesses vectorised to 16 bytes: 4 tiles per GPU thread, run back to "
                      "back [-Rpass=vectorize]") != std::string::npos);
}

TEST_CASE("a diagnostic id is the row of its table") {
  DiagID id = diag::err_lex_bad_dedent;
  CHECK(std::string(diagInfo(id).name) == "err_lex_bad_dedent");
  CHECK(id == diag::err_lex_bad_dedent);
  CHECK(id != diag::err_drv_cannot_open);
  CHECK(std::string(diagInfo(diag::note_previous_definition).name) == "note_previous_definition");
}

TEST_CASE("line and column of locations") {
  Fixture f;
  LineColumn lc = f.sm.lineColumn(f.at(11));
  CHECK(lc.file == "t.tessera");
  CHECK(lc.line == 2);
  CHECK(lc.column == 2);
  CHECK(f.sm.lineText(f.at(11)) == "\ty = x +");
  CHECK(f.sm.text(SourceRange(f.at(4), f.at(5))) == "f");
}

TEST_CASE("text printer: location, message, source line, caret and underline, fix-it") {
  Fixture f;
  std::ostringstream os;
  TextDiagnosticPrinter printer(os, f.sm, /*color=*/false);
  DiagnosticEngine diags(f.sm);
  diags.addConsumer(&printer);
  // "x +" on line 2 starts at byte 15 (after "\ty = "); underline "x +".
  diags.report(diag::err_drv_cannot_open, SourceRange(f.at(15), f.at(18))) << "a" << "b";
  diags.finish();
  std::string out = os.str();
  CHECK(out.find("t.tessera:2:6: error: cannot open input file 'a': b\n") == 0);
  // The tab expands to 8 columns, so the caret sits under 'x'.
  CHECK(out.find("        y = x +\n            ^~~\n") != std::string::npos);
  CHECK(out.find("1 error generated.") != std::string::npos);
}

TEST_CASE("notes print after their diagnostic and fix-its under the line") {
  Fixture f;
  std::ostringstream os;
  TextDiagnosticPrinter printer(os, f.sm, false);
  DiagnosticEngine diags(f.sm);
  diags.addConsumer(&printer);
  diags.report(diag::err_drv_cannot_open, SourceRange(f.at(4), f.at(5)))
          .note(diag::note_previous_definition, SourceRange(f.at(0), f.at(3)))
          .fixitInsert(f.at(5), "(")
      << "a" << "b";
  std::string out = os.str();
  size_t err = out.find("t.tessera:1:5: error:");
  size_t note = out.find("t.tessera:1:1: note: previous definition is here");
  REQUIRE(err != std::string::npos);
  REQUIRE(note != std::string::npos);
  CHECK(err < note);
  CHECK(out.find("\n     (\n") != std::string::npos);
}

TEST_CASE("the error limit stops reporting with one fatal diagnostic") {
  Fixture f;
  StoringDiagnosticConsumer store;
  DiagnosticEngine diags(f.sm);
  diags.addConsumer(&store);
  diags.setErrorLimit(3);
  for (int i = 0; i < 10; ++i) diags.report(diag::err_drv_cannot_open, f.at(0)) << "x" << "y";
  REQUIRE(store.diagnostics.size() == 4);
  CHECK(store.diagnostics[3].id == diag::err_drv_too_many_errors);
  CHECK(store.diagnostics[3].severity == Severity::Fatal);
  CHECK(diags.errorCount() == 3);
  CHECK(diags.stopped());
}

TEST_CASE("an error limit of zero means no limit") {
  Fixture f;
  StoringDiagnosticConsumer store;
  DiagnosticEngine diags(f.sm);
  diags.addConsumer(&store);
  diags.setErrorLimit(0);
  for (int i = 0; i < 100; ++i) diags.report(diag::err_drv_cannot_open, f.at(0)) << "x" << "y";
  CHECK(store.diagnostics.size() == 100);
  CHECK_FALSE(diags.stopped());
}

TEST_CASE("JSON printer writes one object per diagnostic with 1-based ranges") {
  Fixture f;
  std::ostringstream os;
  JSONDiagnosticPrinter printer(os, f.sm);
  DiagnosticEngine diags(f.sm);
  diags.addConsumer(&printer);
  diags.report(diag::err_drv_cannot_open, SourceRange(f.at(15), f.at(18))) << "a\"q" << "b";
  std::string out = os.str();
  CHECK(out ==
        "{\"id\":\"err_drv_cannot_open\",\"severity\":\"error\",\"message\":\"cannot open input file "
        "'a\\\"q': b\",\"range\":{\"file\":\"t.tessera\",\"start\":{\"line\":2,\"column\":6},\"end\":{\"line\":2,"
        "\"column\":9}},\"notes\":[],\"fixits\":[]}\n");
}

TEST_CASE("line numbers count \\n, \\r\\n and a lone \\r as line breaks") {
  SourceManager sm;
  FileID f = sm.addBuffer("cr.tessera", "a\rb\r\nc\nd");
  CHECK(sm.lineColumn(sm.locAt(f, 2)).line == 2);  // b
  CHECK(sm.lineColumn(sm.locAt(f, 5)).line == 3);  // c
  CHECK(sm.lineColumn(sm.locAt(f, 7)).line == 4);  // d
  CHECK(sm.lineText(sm.locAt(f, 2)) == "b");
  CHECK(sm.lineText(sm.locAt(f, 7)) == "d");
}

// The message layer: Content-Length frames and delimited transcripts.
#include <doctest/doctest.h>

#include "lsp/Transport.h"

using namespace tessera::lsp;
using S = MessageReader::Status;

TEST_CASE("frames are extracted whole, one at a time") {
  std::string buf = frameMessage("{\"a\":1}") + frameMessage("{}");
  std::string out;
  CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Message);
  CHECK(out == "{\"a\":1}");
  CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Message);
  CHECK(out == "{}");
  CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Timeout);
  CHECK(MessageReader::extract(buf, InputStyle::Standard, true, out) == S::End);
}

TEST_CASE("a partial frame waits for more input") {
  std::string full = frameMessage("{\"method\":\"x\"}");
  for (size_t cut = 0; cut < full.size(); ++cut) {
    std::string buf = full.substr(0, cut), out;
    CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Timeout);
    buf += full.substr(cut);
    CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Message);
    CHECK(out == "{\"method\":\"x\"}");
  }
}

TEST_CASE("broken headers are reported and skipped") {
  std::string buf = "Foo: bar\r\n\r\n" + frameMessage("{}");
  std::string out;
  CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Malformed);
  CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Message);
  buf = "Content-Length: -5\r\n\r\n";
  CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Malformed);
  buf = "Content-Length: 99999999999999999999\r\n\r\n";
  CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Malformed);
  buf = "Content-Length: 10\r\n\r\n{}";
  CHECK(MessageReader::extract(buf, InputStyle::Standard, true, out) == S::Malformed);
  CHECK(buf.empty());
  buf = std::string(70000, 'x');  // no header end in sight
  CHECK(MessageReader::extract(buf, InputStyle::Standard, false, out) == S::Malformed);
}

TEST_CASE("delimited transcripts: '---' separates, '#' lines are comments") {
  std::string buf = "# comment\n{\"a\":1}\n---\n\n---\n{\"b\":\n2}\n";
  std::string out;
  CHECK(MessageReader::extract(buf, InputStyle::Delimited, true, out) == S::Message);
  CHECK(out == "{\"a\":1}\n");
  CHECK(MessageReader::extract(buf, InputStyle::Delimited, true, out) == S::Message);
  CHECK(out == "{\"b\":\n2}\n");
  CHECK(MessageReader::extract(buf, InputStyle::Delimited, true, out) == S::End);
}

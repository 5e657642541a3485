// The JSON-RPC message layer: reading framed messages (LSP's `Content-Length` headers) or, for
// tests, messages separated by `---` lines (clangd's --input-style=delimited), and framing
// replies. Reading waits with a timeout so the server can run debounced work meanwhile.
#pragma once

#include <string>

namespace tessera::lsp {

enum class InputStyle { Standard, Delimited };

class MessageReader {
 public:
  enum class Status { Message, Malformed, Timeout, End };
  MessageReader(int fd, InputStyle style) : fd_(fd), style_(style) {}
  // Waits at most timeoutMs (negative: no limit) for the next message. Malformed: a header
  // block without a usable Content-Length was skipped (`out` says why).
  Status read(std::string& out, int timeoutMs);

  // Extracts one complete message from `buffer` (consuming it), without any I/O; `atEnd` says
  // the input has ended. The fuzz target drives this directly.
  static Status extract(std::string& buffer, InputStyle style, bool atEnd, std::string& out);

 private:
  int fd_;
  InputStyle style_;
  std::string buf_;
  bool eof_ = false;
};

// "Content-Length: N\r\n\r\n" + body.
std::string frameMessage(const std::string& body);

}  // namespace tessera::lsp

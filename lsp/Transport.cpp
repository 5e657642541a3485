#include "lsp/Transport.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <poll.h>
#include <unistd.h>

namespace tessera::lsp {

namespace {

MessageReader::Status extractFramed(std::string& buf, bool atEnd, std::string& out) {
  using S = MessageReader::Status;
  // Skip blank lines between messages.
  size_t start = 0;
  while (start < buf.size() && (buf[start] == '\r' || buf[start] == '\n')) ++start;
  if (start) buf.erase(0, start);
  size_t headerEnd = buf.find("\r\n\r\n");
  size_t sepLen = 4;
  size_t lf = buf.find("\n\n");
  if (lf != std::string::npos && (headerEnd == std::string::npos || lf < headerEnd)) headerEnd = lf, sepLen = 2;
  if (headerEnd == std::string::npos) {
    if (atEnd && !buf.empty()) {
      out = "incomplete header at end of input";
      buf.clear();
      return S::Malformed;
    }
    if (buf.size() > 1 << 16) {  // a header block this long is garbage
      out = "header block too long";
      buf.clear();
      return S::Malformed;
    }
    return atEnd ? S::End : S::Timeout;
  }
  std::string headers = buf.substr(0, headerEnd);
  long long length = -1;
  size_t pos = 0;
  while (pos <= headers.size()) {
    size_t eol = headers.find('\n', pos);
    if (eol == std::string::npos) eol = headers.size();
    std::string line = headers.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (name == "content-length") {
        std::string v = line.substr(colon + 1);
        char* end = nullptr;
        errno = 0;
        long long n = std::strtoll(v.c_str(), &end, 10);
        while (end && (*end == ' ' || *end == '\t')) ++end;
        if (errno == 0 && end && *end == 0 && n >= 0 && n <= (1LL << 30)) length = n;
      }
    }
    pos = eol + 1;
  }
  if (length < 0) {
    out = "missing or invalid Content-Length header";
    buf.erase(0, headerEnd + sepLen);
    return S::Malformed;
  }
  size_t bodyStart = headerEnd + sepLen;
  if (buf.size() - bodyStart < static_cast<size_t>(length)) {
    if (atEnd) {
      out = "message body shorter than its Content-Length";
      buf.clear();
      return S::Malformed;
    }
    return S::Timeout;
  }
  out = buf.substr(bodyStart, static_cast<size_t>(length));
  buf.erase(0, bodyStart + static_cast<size_t>(length));
  return S::Message;
}

// Messages separated by lines "---"; lines starting with '#' are comments (test transcripts).
MessageReader::Status extractDelimited(std::string& buf, bool atEnd, std::string& out) {
  using S = MessageReader::Status;
  std::string msg;
  size_t pos = 0;
  for (;;) {
    size_t eol = buf.find('\n', pos);
    if (eol == std::string::npos) {
      if (!atEnd) return S::Timeout;
      eol = buf.size();
    }
    std::string line = buf.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t next = eol < buf.size() ? eol + 1 : eol;
    bool finished = next >= buf.size() && atEnd;
    if (line == "---") {
      buf.erase(0, next);
      if (msg.find_first_not_of(" \t\r\n") == std::string::npos) {
        pos = 0;
        msg.clear();
        continue;
      }
      out = msg;
      return S::Message;
    }
    if (line.empty() || line[0] != '#') msg += line + "\n";
    pos = next;
    if (finished) {
      buf.clear();
      if (msg.find_first_not_of(" \t\r\n") == std::string::npos) return S::End;
      out = msg;
      return S::Message;
    }
  }
}

}  // namespace

MessageReader::Status MessageReader::extract(std::string& buffer, InputStyle style, bool atEnd, std::string& out) {
  return style == InputStyle::Standard ? extractFramed(buffer, atEnd, out) : extractDelimited(buffer, atEnd, out);
}

MessageReader::Status MessageReader::read(std::string& out, int timeoutMs) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs < 0 ? 0 : timeoutMs);
  for (;;) {
    Status s = extract(buf_, style_, eof_, out);
    if (s != Status::Timeout) return s;
    int wait = -1;
    if (timeoutMs >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Status::Timeout;
      wait = static_cast<int>(left.count());
    }
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, wait);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return Status::Timeout;
    char chunk[65536];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0)
      eof_ = true;
    else
      buf_.append(chunk, static_cast<size_t>(n));
  }
}

std::string frameMessage(const std::string& body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace tessera::lsp

#include "lsp/Protocol.h"

#include <algorithm>

namespace tessera::lsp {

json toJSON(Position p) { return json{{"line", p.line}, {"character", p.character}}; }
json toJSON(const Range& r) { return json{{"start", toJSON(r.start)}, {"end", toJSON(r.end)}}; }

Position positionFromJSON(const json& j) {
  if (!j.is_object() || !j.contains("line") || !j.contains("character") || !j["line"].is_number_integer() ||
      !j["character"].is_number_integer())
    throw LSPError(ErrorCode::InvalidParams, "a position needs integer 'line' and 'character'");
  long long line = j["line"].get<long long>(), ch = j["character"].get<long long>();
  if (line < 0 || ch < 0 || line > UINT32_MAX || ch > UINT32_MAX)
    throw LSPError(ErrorCode::InvalidParams, "position out of range");
  return {static_cast<uint32_t>(line), static_cast<uint32_t>(ch)};
}

Range rangeFromJSON(const json& j) {
  if (!j.is_object() || !j.contains("start") || !j.contains("end"))
    throw LSPError(ErrorCode::InvalidParams, "a range needs 'start' and 'end'");
  return {positionFromJSON(j["start"]), positionFromJSON(j["end"])};
}

namespace {
// Length in bytes of the UTF-8 sequence starting with `c` (1 for invalid lead bytes).
size_t seqLength(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}
}  // namespace

uint32_t utf16Length(std::string_view s) {
  uint32_t units = 0;
  for (size_t i = 0; i < s.size();) {
    size_t n = std::min(seqLength(static_cast<unsigned char>(s[i])), s.size() - i);
    units += n == 4 ? 2 : 1;
    i += n;
  }
  return units;
}

size_t utf8PrefixForUTF16(std::string_view s, uint32_t units) {
  size_t i = 0;
  uint32_t used = 0;
  while (i < s.size()) {
    size_t n = std::min(seqLength(static_cast<unsigned char>(s[i])), s.size() - i);
    uint32_t u = n == 4 ? 2 : 1;
    if (used + u > units) break;
    used += u;
    i += n;
  }
  return i;
}

LineTable::LineTable(std::string_view text) : text_(text) {
  starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts_.push_back(static_cast<uint32_t>(i + 1));
}

std::string_view LineTable::lineText(uint32_t line) const {
  if (line >= starts_.size()) return {};
  uint32_t b = starts_[line];
  uint32_t e = line + 1 < starts_.size() ? starts_[line + 1] - 1 : static_cast<uint32_t>(text_.size());
  std::string_view s = text_.substr(b, e - b);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

std::optional<uint32_t> LineTable::offset(Position p) const {
  if (p.line >= starts_.size()) return std::nullopt;
  return starts_[p.line] + static_cast<uint32_t>(utf8PrefixForUTF16(lineText(p.line), p.character));
}

uint32_t LineTable::clampedOffset(Position p) const {
  if (auto o = offset(p)) return *o;
  return static_cast<uint32_t>(text_.size());
}

Position LineTable::position(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts_.begin()) - 1;
  std::string_view lt = lineText(line);
  uint32_t inLine = std::min<uint32_t>(offset - starts_[line], static_cast<uint32_t>(lt.size()));
  return {line, utf16Length(lt.substr(0, inLine))};
}

std::string pathToURI(std::string_view path) {
  std::string out = "file://";
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::optional<std::string> uriToPath(std::string_view uri) {
  if (uri.substr(0, 7) != "file://") return std::nullopt;
  std::string_view rest = uri.substr(7);
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  rest = rest.substr(slash);  // drop an authority such as "localhost"
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(rest.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += rest[i];
    }
  }
  return out;
}

namespace {
int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
// The code unit of a `\uXXXX` escape at `i` (the backslash), or -1.
int escapeAt(std::string_view s, size_t i) {
  if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
  int v = 0;
  for (size_t k = i + 2; k < i + 6; ++k) {
    int h = hexValue(s[k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}
}  // namespace

std::string replaceLoneSurrogates(std::string_view body, unsigned& replaced) {
  replaced = 0;
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size();) {
    unsigned char c = static_cast<unsigned char>(body[i]);
    if (c == '\\' && i + 1 < body.size()) {
      int u = escapeAt(body, i);
      if (u >= 0xD800 && u <= 0xDBFF) {
        int low = escapeAt(body, i + 6);
        if (low >= 0xDC00 && low <= 0xDFFF) {
          out.append(body.substr(i, 12));
          i += 12;
          continue;
        }
      }
      if (u >= 0xD800 && u <= 0xDFFF) {
        out += "\\ufffd";
        ++replaced;
        i += 6;
        continue;
      }
      out.append(body.substr(i, 2));  // any other escape, `\\` included
      i += 2;
      continue;
    }
    if (c == 0xED && i + 2 < body.size() && (static_cast<unsigned char>(body[i + 1]) & 0xE0) == 0xA0 &&
        (static_cast<unsigned char>(body[i + 2]) & 0xC0) == 0x80) {
      out += "\xEF\xBF\xBD";
      ++replaced;
      i += 3;
      continue;
    }
    out += static_cast<char>(c);
    ++i;
  }
  return out;
}

}  // namespace tessera::lsp

// LSP 3.17 basics shared by every feature: positions in UTF-16 code units and their exact
// conversion to byte offsets, ranges, URIs, and the JSON-RPC error codes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::lsp {

using json = nlohmann::json;

namespace ErrorCode {
constexpr int ParseError = -32700;
constexpr int InvalidRequest = -32600;
constexpr int MethodNotFound = -32601;
constexpr int InvalidParams = -32602;
constexpr int InternalError = -32603;
constexpr int ServerNotInitialized = -32002;
constexpr int RequestFailed = -32803;
constexpr int RequestCancelled = -32800;
}  // namespace ErrorCode

// Thrown by a handler to answer its request with a JSON-RPC error.
struct LSPError : std::runtime_error {
  int code;
  LSPError(int c, const std::string& msg) : std::runtime_error(msg), code(c) {}
};

struct Position {
  uint32_t line = 0;
  uint32_t character = 0;  // UTF-16 code units
  friend bool operator==(const Position&, const Position&) = default;
};
struct Range {
  Position start, end;
};

json toJSON(Position p);
json toJSON(const Range& r);
// Reads {"line","character"}; throws LSPError(InvalidParams) when malformed or negative.
Position positionFromJSON(const json& j);
Range rangeFromJSON(const json& j);

// Line starts of a text, and exact conversion between byte offsets and LSP positions.
class LineTable {
 public:
  LineTable() = default;
  explicit LineTable(std::string_view text);
  size_t lineCount() const { return starts_.size(); }
  // The byte offset of `p`; a character past the line's end clamps to the end (as the
  // protocol says). A line past the end: nullopt.
  std::optional<uint32_t> offset(Position p) const;
  // Like offset(), but a line past the end clamps to the end of the text.
  uint32_t clampedOffset(Position p) const;
  Position position(uint32_t offset) const;
  // The line's text without its terminator.
  std::string_view lineText(uint32_t line) const;

 private:
  std::string_view text_;
  std::vector<uint32_t> starts_;
};

// Number of UTF-16 code units in a UTF-8 string (invalid bytes count one unit each).
uint32_t utf16Length(std::string_view s);
// Byte length of the longest prefix of `s` that fits in `units` UTF-16 code units.
size_t utf8PrefixForUTF16(std::string_view s, uint32_t units);

// A JSON message body with every unpaired UTF-16 surrogate made U+FFFD: the escapes `\uD800`
// (a high surrogate not followed by a low one, or a low one alone) and their 3-byte encodings
// (ED A0..BF xx, as WTF-8 writes them). Editors whose strings are UTF-16 can send those (a
// JavaScript string may hold a lone surrogate; JSON.stringify escapes it); U+FFFD is one UTF-16
// unit as well, so positions stay those the editor counts. `replaced` is the number made.
std::string replaceLoneSurrogates(std::string_view body, unsigned& replaced);

// file:// URIs. uriToPath returns nullopt for other schemes.
std::string pathToURI(std::string_view path);
std::optional<std::string> uriToPath(std::string_view uri);

}  // namespace tessera::lsp

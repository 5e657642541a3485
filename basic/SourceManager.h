// Source buffers and locations. Every location in the compiler is one 32-bit offset into the
// concatenation of all loaded buffers (as in clang), so a token or AST node carries its exact
// range in two integers and the manager maps it back to file, line and column.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct SourceLoc {
  uint32_t offset = UINT32_MAX;
  bool valid() const { return offset != UINT32_MAX; }
  friend bool operator==(SourceLoc a, SourceLoc b) { return a.offset == b.offset; }
  friend bool operator<(SourceLoc a, SourceLoc b) { return a.offset < b.offset; }
};

// Half-open range [begin, end).
struct SourceRange {
  SourceLoc begin, end;
  SourceRange() = default;
  SourceRange(SourceLoc b, SourceLoc e) : begin(b), end(e) {}
  explicit SourceRange(SourceLoc at) : begin(at), end(at) {}
  bool valid() const { return begin.valid(); }
  static SourceRange span(SourceRange a, SourceRange b) { return {a.begin, b.end}; }
};

using FileID = uint32_t;

struct LineColumn {
  std::string_view file;
  uint32_t line = 0;    // 1-based
  uint32_t column = 0;  // 1-based, in bytes
};

class SourceManager {
 public:
  static constexpr size_t kMaxFileBytes = size_t(1) << 30;
  // Takes a copy of `text`; the returned id is stable for the manager's lifetime.
  FileID addBuffer(std::string name, std::string text);
  // Reads a file; returns false and leaves `error` set to the reason ("is a directory", ...)
  // when it cannot be read.
  bool addFile(const std::string& path, FileID& id, std::string& error);

  std::string_view bufferName(FileID id) const { return buffers_[id]->name; }
  std::string_view bufferText(FileID id) const { return buffers_[id]->text; }
  SourceLoc bufferStart(FileID id) const { return {buffers_[id]->base}; }
  size_t bufferCount() const { return buffers_.size(); }

  FileID fileOf(SourceLoc loc) const;
  LineColumn lineColumn(SourceLoc loc) const;
  // The text of the line holding `loc`, without its newline.
  std::string_view lineText(SourceLoc loc) const;
  // The text a range covers (empty for an invalid or cross-buffer range).
  std::string_view text(SourceRange range) const;
  SourceLoc locAt(FileID id, uint32_t offsetInBuffer) const { return {buffers_[id]->base + offsetInBuffer}; }
  uint32_t offsetInBuffer(SourceLoc loc) const;

 private:
  struct Buffer {
    std::string name;
    std::string text;  // always NUL-terminated past the end (re2c sentinel)
    uint32_t base = 0;
    mutable std::vector<uint32_t> lineStarts;  // computed lazily
  };
  const Buffer& bufferOf(SourceLoc loc) const;
  void computeLines(const Buffer& b) const;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  uint32_t nextBase_ = 0;
};

}  // namespace tessera

#include "basic/SourceManager.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera {

FileID SourceManager::addBuffer(std::string name, std::string text) {
  auto b = std::make_unique<Buffer>();
  b->name = std::move(name);
  b->text = std::move(text);
  b->base = nextBase_;
  // One extra position per buffer so that an end-of-file location stays inside it.
  nextBase_ += static_cast<uint32_t>(b->text.size()) + 1;
  buffers_.push_back(std::move(b));
  return static_cast<FileID>(buffers_.size() - 1);
}

bool SourceManager::addFile(const std::string& path, FileID& id, std::string& error) {
  // std::ifstream opens a directory and then reads nothing: ask the file system first, so that
  // `tesserac dir/` is an error and not an empty module.
  std::error_code ec;
  std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    error = "no such file or directory";
    return false;
  }
  if (std::filesystem::is_directory(st)) {
    error = "is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot be read (permission denied?)";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = "read error";
    return false;
  }
  std::string text = ss.str();
  // Locations are 32-bit offsets over every buffer; keep well within them.
  if (text.size() > kMaxFileBytes) {
    error = "is larger than the 1 GiB a source file may have";
    return false;
  }
  id = addBuffer(path, std::move(text));
  return true;
}

FileID SourceManager::fileOf(SourceLoc loc) const {
  auto it = std::upper_bound(buffers_.begin(), buffers_.end(), loc.offset,
                             [](uint32_t off, const std::unique_ptr<Buffer>& b) { return off < b->base; });
  return static_cast<FileID>((it - buffers_.begin()) - 1);
}

const SourceManager::Buffer& SourceManager::bufferOf(SourceLoc loc) const { return *buffers_[fileOf(loc)]; }

uint32_t SourceManager::offsetInBuffer(SourceLoc loc) const { return loc.offset - bufferOf(loc).base; }

void SourceManager::computeLines(const Buffer& b) const {
  if (!b.lineStarts.empty()) return;
  // Line breaks as the scanner sees them: \n, \r\n, and a lone \r.
  b.lineStarts.push_back(0);
  for (uint32_t i = 0; i < b.text.size(); ++i) {
    if (b.text[i] == '\n')
      b.lineStarts.push_back(i + 1);
    else if (b.text[i] == '\r' && (i + 1 >= b.text.size() || b.text[i + 1] != '\n'))
      b.lineStarts.push_back(i + 1);
  }
}

LineColumn SourceManager::lineColumn(SourceLoc loc) const {
  if (!loc.valid() || buffers_.empty()) return {};
  const Buffer& b = bufferOf(loc);
  computeLines(b);
  uint32_t off = std::min<uint32_t>(loc.offset - b.base, static_cast<uint32_t>(b.text.size()));
  auto it = std::upper_bound(b.lineStarts.begin(), b.lineStarts.end(), off);
  uint32_t line = static_cast<uint32_t>(it - b.lineStarts.begin());
  return {b.name, line, off - b.lineStarts[line - 1] + 1};
}

std::string_view SourceManager::lineText(SourceLoc loc) const {
  if (!loc.valid() || buffers_.empty()) return {};
  const Buffer& b = bufferOf(loc);
  LineColumn lc = lineColumn(loc);
  uint32_t start = b.lineStarts[lc.line - 1];
  uint32_t end = start;
  while (end < b.text.size() && b.text[end] != '\n' && b.text[end] != '\r') ++end;
  return std::string_view(b.text).substr(start, end - start);
}

std::string_view SourceManager::text(SourceRange range) const {
  if (!range.valid() || !range.end.valid() || buffers_.empty()) return {};
  const Buffer& b = bufferOf(range.begin);
  if (fileOf(range.end) != fileOf(range.begin) || range.end < range.begin) return {};
  uint32_t s = range.begin.offset - b.base, e = std::min<uint32_t>(range.end.offset - b.base, b.text.size());
  return std::string_view(b.text).substr(s, e - s);
}

}  // namespace tessera

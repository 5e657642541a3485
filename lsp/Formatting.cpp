// textDocument/formatting over the formatter of the front end (frontend/Format.h): one edit that
// replaces the changed middle of the document.
#include "frontend/Format.h"
#include "lsp/Features.h"

namespace tessera::lsp {

json formattingEdits(const Analysis& a) {
  std::string_view text = a.text();
  FormatResult r = formatSource(text, a.uri);
  if (!r.ok) throw LSPError(ErrorCode::RequestFailed, r.error);
  json edits = json::array();
  if (r.text == text) return edits;
  // The smallest edit: common prefix and suffix kept, so the cursor and marks elsewhere stay.
  size_t pre = 0;
  while (pre < text.size() && pre < r.text.size() && text[pre] == r.text[pre]) ++pre;
  while (pre > 0 && ((static_cast<unsigned char>(text[pre]) & 0xC0) == 0x80 || text[pre - 1] == '\r')) --pre;
  size_t suf = 0;
  while (suf < text.size() - pre && suf < r.text.size() - pre &&
         text[text.size() - 1 - suf] == r.text[r.text.size() - 1 - suf])
    ++suf;
  while (suf > 0 && (static_cast<unsigned char>(text[text.size() - suf]) & 0xC0) == 0x80) --suf;
  Range range{a.lines.position(static_cast<uint32_t>(pre)), a.lines.position(static_cast<uint32_t>(text.size() - suf))};
  edits.push_back({{"range", toJSON(range)}, {"newText", r.text.substr(pre, r.text.size() - pre - suf)}});
  return edits;
}

}  // namespace tessera::lsp

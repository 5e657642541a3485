#include "lsp/Documents.h"

namespace tessera::lsp {

Document& DocumentStore::open(const std::string& uri, std::string text, int64_t version) {
  Document& d = docs_[uri];
  d.uri = uri;
  d.text = std::move(text);
  d.version = version;
  d.analysis.reset();
  d.last.reset();
  return d;
}

bool DocumentStore::close(const std::string& uri) { return docs_.erase(uri) > 0; }

Document* DocumentStore::find(const std::string& uri) {
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : &it->second;
}

void DocumentStore::applyChange(Document& doc, const json& change) {
  if (!change.is_object() || !change.contains("text") || !change["text"].is_string())
    throw LSPError(ErrorCode::InvalidParams, "a content change needs a 'text' string");
  const std::string& text = change["text"].get_ref<const std::string&>();
  if (!change.contains("range") || change["range"].is_null()) {
    doc.text = text;
  } else {
    Range r = rangeFromJSON(change["range"]);
    LineTable lines(doc.text);
    uint32_t b = lines.clampedOffset(r.start), e = lines.clampedOffset(r.end);
    if (e < b) std::swap(b, e);
    doc.text.replace(b, e - b, text);
  }
  doc.analysis.reset();
}

std::shared_ptr<const Analysis> DocumentStore::analysisOf(Document& doc) {
  if (!doc.analysis) doc.last = doc.analysis = analyze(doc.uri, doc.text, doc.version, remarks);
  return doc.analysis;
}

}  // namespace tessera::lsp

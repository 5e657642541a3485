// The open documents: their text (kept in sync through full and incremental changes), version,
// and the latest analysis, rebuilt lazily when the text has changed.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "lsp/Analysis.h"
#include "lsp/Protocol.h"

namespace tessera::lsp {

struct Document {
  std::string uri;
  std::string text;
  int64_t version = 0;
  std::shared_ptr<const Analysis> analysis;  // of the current text; null after a change until rebuilt
  std::shared_ptr<const Analysis> last;      // the latest analysis built, possibly of an older text
};

class DocumentStore {
 public:
  Document& open(const std::string& uri, std::string text, int64_t version);
  bool close(const std::string& uri);
  Document* find(const std::string& uri);
  // Applies one TextDocumentContentChangeEvent (with "range": incremental; without: the whole
  // text). Positions past the end clamp to the end. Throws LSPError on malformed changes.
  static void applyChange(Document& doc, const json& change);
  // The analysis of the document's current text (rebuilt if stale).
  std::shared_ptr<const Analysis> analysisOf(Document& doc);
  const std::map<std::string, Document>& all() const { return docs_; }
  // Adds code generation's remarks to each analysis when set (tessera-lsp --remarks).
  RemarkProvider remarks;

 private:
  std::map<std::string, Document> docs_;
};

}  // namespace tessera::lsp

#include "basic/Diagnostics.h"

#include <algorithm>

#include "basic/Remarks.h"

namespace tessera {

const DiagInfo kDriverDiagnostics[] = {
#define DIAG TESSERA_DIAG_ROW
#include "basic/DriverDiagnostics.def"
#undef DIAG
};

const char* severityName(Severity s) {
  switch (s) {
    case Severity::Remark: return "remark";
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
    case Severity::Fatal: return "fatal error";
  }
  return "error";
}

std::string formatMessage(std::string_view format, const std::vector<std::string>& args) {
  std::string out;
  out.reserve(format.size() + 16);
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '{' && i + 2 < format.size() && format[i + 1] >= '0' && format[i + 1] <= '9' &&
        format[i + 2] == '}') {
      size_t n = static_cast<size_t>(format[i + 1] - '0');
      out += n < args.size() ? args[n] : std::string("<?>");
      i += 2;
    } else {
      out += format[i];
    }
  }
  return out;
}

// ---- DiagBuilder ----

DiagBuilder::DiagBuilder(DiagnosticEngine* engine, DiagID id, SourceRange range)
    : engine_(engine), id_(id), range_(range) {}

DiagBuilder::DiagBuilder(DiagBuilder&& o) noexcept
    : engine_(o.engine_),
      id_(o.id_),
      range_(o.range_),
      args_(std::move(o.args_)),
      notes_(std::move(o.notes_)),
      fixits_(std::move(o.fixits_)) {
  o.engine_ = nullptr;
}

DiagBuilder::~DiagBuilder() {
  if (!engine_) return;
  Diagnostic d;
  d.id = id_;
  d.severity = diagInfo(id_).severity;
  d.range = range_;
  d.message = formatMessage(diagInfo(id_).format, args_);
  d.notes = std::move(notes_);
  d.fixits = std::move(fixits_);
  engine_->emit(std::move(d));
}

DiagBuilder& DiagBuilder::operator<<(std::string_view arg) {
  args_.emplace_back(arg);
  return *this;
}

DiagBuilder& DiagBuilder::note(DiagID id, SourceRange range, std::vector<std::string> args) {
  notes_.push_back({id, range, formatMessage(diagInfo(id).format, args)});
  return *this;
}

DiagBuilder& DiagBuilder::fixit(SourceRange range, std::string replacement) {
  fixits_.push_back({range, std::move(replacement)});
  return *this;
}

// ---- DiagnosticEngine ----

bool DiagnosticEngine::remarkEnabled(DiagID id) const {
  const DiagInfo& info = id.info();
  return info.remarkKind == RemarkKind::None || (remarks_ && remarks_->wants(info));
}

void DiagnosticEngine::emit(Diagnostic d) {
  if (stopped_) return;
  if (d.severity == Severity::Remark && !remarkEnabled(d.id)) return;
  if (d.severity == Severity::Warning && warningsAsErrors_) d.severity = Severity::Error;
  if (d.severity == Severity::Error || d.severity == Severity::Fatal) {
    if (errorLimit_ != 0 && errors_ >= errorLimit_) {
      stopped_ = true;
      Diagnostic limit;
      limit.id = diag::err_drv_too_many_errors;
      limit.severity = Severity::Fatal;
      limit.message = diagInfo(limit.id).format;
      for (auto* c : consumers_) c->handle(limit);
      return;
    }
    ++errors_;
    if (d.severity == Severity::Fatal) stopped_ = true;
  } else if (d.severity == Severity::Warning) {
    ++warnings_;
  }
  for (auto* c : consumers_) c->handle(d);
}

void DiagnosticEngine::finish() {
  for (auto* c : consumers_) c->finish();
}

// ---- Text printer ----

namespace {
const char* kBold = "\033[1m";
const char* kReset = "\033[0m";
const char* colorOf(Severity s) {
  switch (s) {
    case Severity::Remark: return "\033[1;34m";
    case Severity::Note: return "\033[1;36m";
    case Severity::Warning: return "\033[1;35m";
    default: return "\033[1;31m";
  }
}
const char* kGreen = "\033[1;32m";

// Display column of a byte offset: tabs expand to 8-column stops, a UTF-8 character counts
// once.
size_t displayColumn(std::string_view line, size_t byteCol) {
  size_t col = 0;
  for (size_t i = 0; i < byteCol && i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if ((c & 0xC0) == 0x80) continue;
    col = c == '\t' ? (col / 8 + 1) * 8 : col + 1;
  }
  return col;
}
std::string expandTabs(std::string_view line) {
  std::string out;
  size_t col = 0;
  for (char c : line) {
    if (c == '\t') {
      do out += ' ';
      while (++col % 8);
    } else {
      out += c;
      if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++col;
    }
  }
  return out;
}

// The part of a source line a snippet shows. Lines up to kMaxSnippetBytes are shown whole;
// longer ones (minified or generated sources) as a window around the caret with "..." where
// text was left out, as clang does, so that one diagnostic never prints megabytes.
constexpr size_t kMaxSnippetBytes = 256;
constexpr size_t kWindowBefore = 60, kWindowAfter = 100;
struct Snippet {
  std::string_view text;  // the shown bytes
  size_t offset = 0;      // byte offset of `text` in the line
  bool cutLeft = false, cutRight = false;
  // Display column of a byte offset of the line (npos when it lies outside the window).
  size_t column(size_t byte) const {
    if (byte < offset || byte > offset + text.size()) return std::string_view::npos;
    return (cutLeft ? 3 : 0) + displayColumn(text, byte - offset);
  }
};
Snippet snippetOf(std::string_view line, size_t caretByte) {
  Snippet s;
  s.text = line;
  if (line.size() <= kMaxSnippetBytes) return s;
  auto isContinuation = [&](size_t i) {
    return i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80;
  };
  size_t b = caretByte > kWindowBefore ? caretByte - kWindowBefore : 0;
  size_t e = std::min(line.size(), caretByte + kWindowAfter);
  while (b > 0 && isContinuation(b)) --b;
  while (e < line.size() && isContinuation(e)) ++e;
  s.text = line.substr(b, e - b);
  s.offset = b;
  s.cutLeft = b > 0;
  s.cutRight = e < line.size();
  return s;
}

std::string quoted(std::string_view text) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMax; ++i)
    out += text[i] == '\n' ? std::string("\\n") : std::string(1, text[i]);
  if (text.size() > kMax) out += "...";
  return out + "'";
}
}  // namespace

void TextDiagnosticPrinter::printOne(Severity sev, DiagID id, SourceRange range, const std::string& message,
                                     const std::vector<FixIt>& fixits) {
  if (color_) os_ << kBold;
  if (range.valid()) {
    LineColumn lc = sm_.lineColumn(range.begin);
    os_ << lc.file << ':' << lc.line << ':' << lc.column << ": ";
  } else {
    os_ << "tesserac: ";
  }
  if (color_) os_ << colorOf(sev);
  os_ << severityName(sev) << ": ";
  if (color_) os_ << kReset << kBold;
  os_ << message;
  if (sev == Severity::Warning) os_ << " [" << diagInfo(id).name << ']';
  if (sev == Severity::Remark && diagInfo(id).remarkPass) os_ << " [" << remarkFlag(diagInfo(id)) << ']';
  if (color_) os_ << kReset;
  os_ << '\n';
  if (!range.valid()) return;

  std::string_view line = sm_.lineText(range.begin);
  LineColumn lc = sm_.lineColumn(range.begin);
  size_t startByte = lc.column - 1;
  // The underline covers the range's part on the first line; at least one caret.
  size_t endByte = startByte + 1;
  if (range.end.valid() && range.end.offset > range.begin.offset) {
    LineColumn le = sm_.lineColumn(range.end);
    endByte = le.line == lc.line ? le.column - 1 : line.size();
    endByte = std::max(endByte, startByte + 1);
  }
  Snippet snip = snippetOf(line, startByte);
  endByte = std::min(endByte, snip.offset + snip.text.size());
  size_t startCol = snip.column(startByte);
  if (startCol == std::string_view::npos) startCol = 0;
  size_t endCol = startCol + 1;
  if (endByte > startByte + 1) {
    size_t c = snip.column(endByte);
    if (c != std::string_view::npos && c > startCol) endCol = c;
  }
  os_ << (snip.cutLeft ? "..." : "") << expandTabs(snip.text) << (snip.cutRight ? "..." : "") << '\n';
  std::string marker(startCol, ' ');
  marker += '^';
  marker.append(endCol - startCol - 1, '~');
  if (color_) os_ << kGreen;
  os_ << marker;
  if (color_) os_ << kReset;
  os_ << '\n';

  // Fix-its: insertions and replacements on this line are shown under it at their columns (one
  // line, as clang does, while they do not overlap); every other one (a removal, another line,
  // text outside the window) gets a line of its own, so the text shows each fix-it the JSON has.
  std::string inlineLine;
  std::vector<const FixIt*> separate;
  for (const FixIt& f : fixits) {
    if (!f.range.valid()) continue;
    LineColumn fb = sm_.lineColumn(f.range.begin);
    size_t col = fb.line == lc.line ? snip.column(fb.column - 1) : std::string_view::npos;
    bool oneLine = f.replacement.find('\n') == std::string::npos &&
                   (!f.range.end.valid() || sm_.lineColumn(f.range.end).line == fb.line);
    if (col == std::string_view::npos || f.replacement.empty() || !oneLine || col < inlineLine.size()) {
      separate.push_back(&f);
      continue;
    }
    inlineLine.append(col - inlineLine.size(), ' ');
    inlineLine += f.replacement;
  }
  if (!inlineLine.empty()) {
    if (color_) os_ << kGreen;
    os_ << inlineLine;
    if (color_) os_ << kReset;
    os_ << '\n';
  }
  for (const FixIt* f : separate) {
    LineColumn fb = sm_.lineColumn(f->range.begin);
    std::string_view old = sm_.text(f->range);
    os_ << fb.file << ':' << fb.line << ':' << fb.column << ": fix-it: ";
    if (f->replacement.empty())
      os_ << "remove " << quoted(old) << '\n';
    else if (old.empty())
      os_ << "insert " << quoted(f->replacement) << '\n';
    else
      os_ << "replace " << quoted(old) << " with " << quoted(f->replacement) << '\n';
  }
}

void TextDiagnosticPrinter::handle(const Diagnostic& d) {
  // The error limit's own notice is not one of the program's errors.
  if ((d.severity == Severity::Error || d.severity == Severity::Fatal) && d.id != diag::err_drv_too_many_errors)
    ++errors_;
  if (d.severity == Severity::Warning) ++warnings_;
  printOne(d.severity, d.id, d.range, d.message, d.fixits);
  for (const DiagNote& n : d.notes) printOne(Severity::Note, n.id, n.range, n.message, {});
}

void TextDiagnosticPrinter::finish() {
  if (!errors_ && !warnings_) return;
  if (warnings_) os_ << warnings_ << (warnings_ == 1 ? " warning" : " warnings");
  if (warnings_ && errors_) os_ << " and ";
  if (errors_) os_ << errors_ << (errors_ == 1 ? " error" : " errors");
  os_ << " generated.\n";
}

// ---- JSON printer ----

namespace {
std::string jsonEscape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

void jsonRange(std::ostream& os, const SourceManager& sm, SourceRange r) {
  if (!r.valid()) {
    os << "null";
    return;
  }
  LineColumn b = sm.lineColumn(r.begin);
  LineColumn e = sm.lineColumn(r.end.valid() ? r.end : r.begin);
  os << "{\"file\":\"" << jsonEscape(b.file) << "\",\"start\":{\"line\":" << b.line << ",\"column\":" << b.column
     << "},\"end\":{\"line\":" << e.line << ",\"column\":" << e.column << "}}";
}
}  // namespace

void JSONDiagnosticPrinter::handle(const Diagnostic& d) {
  os_ << "{\"id\":\"" << diagInfo(d.id).name << "\",\"severity\":\"" << severityName(d.severity) << "\",\"message\":\""
      << jsonEscape(d.message) << "\",\"range\":";
  jsonRange(os_, sm_, d.range);
  os_ << ",\"notes\":[";
  for (size_t i = 0; i < d.notes.size(); ++i) {
    if (i) os_ << ',';
    os_ << "{\"id\":\"" << diagInfo(d.notes[i].id).name << "\",\"message\":\"" << jsonEscape(d.notes[i].message)
        << "\",\"range\":";
    jsonRange(os_, sm_, d.notes[i].range);
    os_ << '}';
  }
  os_ << "],\"fixits\":[";
  for (size_t i = 0; i < d.fixits.size(); ++i) {
    if (i) os_ << ',';
    os_ << "{\"range\":";
    jsonRange(os_, sm_, d.fixits[i].range);
    os_ << ",\"replacement\":\"" << jsonEscape(d.fixits[i].replacement) << "\"}";
  }
  os_ << "]}\n";
}

}  // namespace tessera

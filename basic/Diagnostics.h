// The diagnostics engine: every diagnostic has an id from the registry (Diagnostics.def), a
// severity, a primary range, optional notes and fix-it hints. Consumers render them (clang-style
// text, JSON) or store them (tests, the language server).
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "basic/SourceManager.h"

namespace tessera {

// Remarks (opt-in: -Rpass=, -Rpass-missed=, -Rpass-analysis=) report what the compiler chose,
// like clang's -R flags (basic/Remarks.h).
enum class Severity : uint8_t { Remark, Note, Warning, Error, Fatal };

// A remark says that an optimisation was done (Passed), was not done (Missed), or what decides
// it (Analysis); the three -R flags select them by their pass's name.
enum class RemarkKind : uint8_t { None, Passed, Missed, Analysis };

struct DiagInfo {
  const char* name;  // the id as written in the registry, e.g. "err_lex_bad_dedent"
  Severity severity;
  const char* format;                // message with {0}, {1}, ... placeholders
  const char* remarkPass = nullptr;  // remarks: the pass -R flags match, e.g. "vectorize"
  RemarkKind remarkKind = RemarkKind::None;
};

// The registry: every stage keeps its diagnostics in a table of its own (<Stage>Diagnostics.def,
// one DIAG(Id, Severity, "message") row each) and declares them in its <Stage>Diagnostics.h as
// an enum in namespace diag plus a DiagTable specialisation (TESSERA_DIAGNOSTIC_TABLE_DECL).
// A DiagID is a row of any of these tables: diag::err_lex_bad_dedent converts to one.
template <class Enum>
struct DiagTable;  // static constexpr const DiagInfo* rows: the table of Enum's diagnostics

class DiagID {
 public:
  constexpr DiagID() = default;
  template <class Enum, class = decltype(DiagTable<Enum>::rows)>
  constexpr DiagID(Enum e) : row_(&DiagTable<Enum>::rows[static_cast<size_t>(e)]) {}
  const DiagInfo& info() const { return *row_; }
  friend bool operator==(DiagID a, DiagID b) { return a.row_ == b.row_; }
  friend bool operator!=(DiagID a, DiagID b) { return a.row_ != b.row_; }

 private:
  const DiagInfo* row_ = nullptr;
};

// A stage's header declares its table after the enum of its rows:
//   namespace diag { enum Sema : uint16_t {
//   #define DIAG TESSERA_DIAG_ENUMERATOR
//   #include "sema/SemaDiagnostics.def"
//   #undef DIAG
//     NumSemaDiagnostics
//   }; }
//   TESSERA_DIAGNOSTIC_TABLE_DECL(Sema)
// and one of its .cpp files defines the rows: const DiagInfo kSemaDiagnostics[] = { the same
// #include with DIAG defined as TESSERA_DIAG_ROW }.
#define TESSERA_DIAGNOSTIC_TABLE_DECL(NAME)                       \
  extern const ::tessera::DiagInfo k##NAME##Diagnostics[];        \
  template <>                                                     \
  struct DiagTable<diag::NAME> {                                  \
    static constexpr const DiagInfo* rows = k##NAME##Diagnostics; \
  };
#define TESSERA_DIAG_ENUMERATOR(ID, SEV, MSG) ID,
#define TESSERA_DIAG_ROW(ID, SEV, MSG) {#ID, ::tessera::Severity::SEV, MSG},

inline const DiagInfo& diagInfo(DiagID id) { return id.info(); }
const char* severityName(Severity s);
// Replaces {N} in `format` with args[N].
std::string formatMessage(std::string_view format, const std::vector<std::string>& args);

struct FixIt {
  SourceRange range;  // text to replace (empty range: insertion)
  std::string replacement;
};

struct DiagNote {
  DiagID id;
  SourceRange range;
  std::string message;
};

struct Diagnostic {
  DiagID id;
  Severity severity;
  SourceRange range;
  std::string message;
  std::vector<DiagNote> notes;
  std::vector<FixIt> fixits;
};

class DiagnosticConsumer {
 public:
  virtual ~DiagnosticConsumer() = default;
  virtual void handle(const Diagnostic& d) = 0;
  virtual void finish() {}
};

class DiagnosticEngine;

// Collects arguments, notes and fix-its; the diagnostic is emitted when the builder dies.
class DiagBuilder {
 public:
  DiagBuilder(DiagnosticEngine* engine, DiagID id, SourceRange range);
  DiagBuilder(DiagBuilder&& other) noexcept;
  DiagBuilder(const DiagBuilder&) = delete;
  ~DiagBuilder();

  DiagBuilder& operator<<(std::string_view arg);
  DiagBuilder& operator<<(const std::string& arg) { return *this << std::string_view(arg); }
  DiagBuilder& operator<<(const char* arg) { return *this << std::string_view(arg); }
  DiagBuilder& operator<<(long long arg) { return *this << std::string_view(std::to_string(arg)); }
  DiagBuilder& operator<<(unsigned long long arg) { return *this << std::string_view(std::to_string(arg)); }
  DiagBuilder& operator<<(int arg) { return *this << static_cast<long long>(arg); }
  DiagBuilder& operator<<(unsigned arg) { return *this << static_cast<unsigned long long>(arg); }
  DiagBuilder& operator<<(unsigned long arg) { return *this << static_cast<unsigned long long>(arg); }
  DiagBuilder& operator<<(long arg) { return *this << static_cast<long long>(arg); }

  // A note with its own registry id and arguments.
  DiagBuilder& note(DiagID id, SourceRange range, std::vector<std::string> args = {});
  DiagBuilder& fixit(SourceRange range, std::string replacement);
  DiagBuilder& fixitInsert(SourceLoc at, std::string text) { return fixit(SourceRange(at), std::move(text)); }

 private:
  DiagnosticEngine* engine_;
  DiagID id_;
  SourceRange range_;
  std::vector<std::string> args_;
  std::vector<DiagNote> notes_;
  std::vector<FixIt> fixits_;
};

class RemarkFilter;

class DiagnosticEngine {
 public:
  explicit DiagnosticEngine(const SourceManager& sm) : sm_(sm) {}

  DiagBuilder report(DiagID id, SourceRange range) { return DiagBuilder(this, id, range); }
  DiagBuilder report(DiagID id, SourceLoc at) { return report(id, SourceRange(at, SourceLoc{at.offset + 1})); }

  void addConsumer(DiagnosticConsumer* c) { consumers_.push_back(c); }
  // 0 means no limit. After the limit is reached one fatal diagnostic is emitted and every
  // later one is dropped.
  void setErrorLimit(unsigned n) { errorLimit_ = n; }
  void setWarningsAsErrors(bool on) { warningsAsErrors_ = on; }
  // Remarks of a pass (rows of basic/RemarkDiagnostics.def) are dropped unless the filter asks
  // for their kind and pass; without a filter, none is shown.
  void setRemarkFilter(std::shared_ptr<const RemarkFilter> f) { remarks_ = std::move(f); }
  bool remarkEnabled(DiagID id) const;

  unsigned errorCount() const { return errors_; }
  unsigned warningCount() const { return warnings_; }
  bool hasErrors() const { return errors_ > 0; }
  // True once a fatal diagnostic (or the error limit) stopped reporting.
  bool stopped() const { return stopped_; }
  const SourceManager& sourceManager() const { return sm_; }
  void finish();

  void emit(Diagnostic d);

 private:
  const SourceManager& sm_;
  std::vector<DiagnosticConsumer*> consumers_;
  std::shared_ptr<const RemarkFilter> remarks_;
  unsigned errors_ = 0, warnings_ = 0, errorLimit_ = 20;
  bool stopped_ = false, warningsAsErrors_ = false;
};

// Keeps every diagnostic (for tests and the language server).
class StoringDiagnosticConsumer : public DiagnosticConsumer {
 public:
  void handle(const Diagnostic& d) override { diagnostics.push_back(d); }
  std::vector<Diagnostic> diagnostics;
};

// clang-style text: "file:line:col: error: message", the source line, a caret and range
// underline, notes, and fix-it hints. Colour only when asked (the driver asks on a terminal).
class TextDiagnosticPrinter : public DiagnosticConsumer {
 public:
  TextDiagnosticPrinter(std::ostream& os, const SourceManager& sm, bool color) : os_(os), sm_(sm), color_(color) {}
  void handle(const Diagnostic& d) override;
  void finish() override;

 private:
  void printOne(Severity sev, DiagID id, SourceRange range, const std::string& message,
                const std::vector<FixIt>& fixits);
  std::ostream& os_;
  const SourceManager& sm_;
  bool color_;
  unsigned errors_ = 0, warnings_ = 0;
};

// One JSON object per line (for tools): {"id","severity","file","range":{start,end},"message",
// "notes":[...],"fixits":[...]}; lines and columns are 1-based.
class JSONDiagnosticPrinter : public DiagnosticConsumer {
 public:
  JSONDiagnosticPrinter(std::ostream& os, const SourceManager& sm) : os_(os), sm_(sm) {}
  void handle(const Diagnostic& d) override;

 private:
  std::ostream& os_;
  const SourceManager& sm_;
};

// The diagnostics of the driver and of the engine itself (basic/DriverDiagnostics.def).
namespace diag {
enum Driver : uint16_t {
#define DIAG TESSERA_DIAG_ENUMERATOR
#include "basic/DriverDiagnostics.def"
#undef DIAG
  NumDriverDiagnostics
};
}  // namespace diag
TESSERA_DIAGNOSTIC_TABLE_DECL(Driver)

}  // namespace tessera

//===- ProfileReport.cpp - Chrome trace JSON and the summary table ---------------------------===//
#include "runtime/ProfileReport.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace tessera::rt::profile {

namespace {

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

bool writeTrace(const std::vector<Record>& records, const TraceInfo& info, std::string& error) {
  std::ofstream f(info.path, std::ios::binary | std::ios::trunc);
  if (!f) {
    error = "cannot write the trace '" + info.path + "'";
    return false;
  }
  f << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"producer\": \"libtessera_rt\", \"device\": "
    << jsonString(info.device) << "},\n\"traceEvents\": [\n";
  f << "{\"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"name\": \"process_name\", \"args\": {\"name\": "
    << jsonString("Tessera: " + info.device) << "}}";
  for (const auto& [id, name] : info.streams)
    f << ",\n{\"ph\": \"M\", \"pid\": 1, \"tid\": " << id
      << ", \"name\": \"thread_name\", \"args\": {\"name\": " << jsonString(name) << "}}";
  for (const Record& r : records) {
    f << ",\n{\"ph\": \"X\", \"pid\": 1, \"tid\": " << r.stream << ", \"cat\": \"" << kindName(r.kind)
      << "\", \"name\": " << jsonString(r.name) << ", \"ts\": " << number(r.startUs)
      << ", \"dur\": " << number(r.durationUs) << ", \"args\": {\"bytes\": " << r.bytes;
    if (r.flops > 0) f << ", \"flops\": " << number(r.flops);
    if (r.durationUs > 0) {
      f << ", \"GB/s\": " << number(r.bytes / (r.durationUs * 1e3));
      if (r.flops > 0) f << ", \"TFLOP/s\": " << number(r.flops / (r.durationUs * 1e6));
    }
    if (!r.detail.empty()) f << ", \"detail\": " << jsonString(r.detail);
    f << "}}";
  }
  f << "\n]}\n";
  if (!f.flush()) {
    error = "cannot write the trace '" + info.path + "'";
    return false;
  }
  return true;
}

std::string summaryText(const std::vector<Record>& records, const TraceInfo& info) {
  struct Row {
    Kind kind;
    std::string name;
    uint64_t calls = 0, bytes = 0;
    double us = 0, flops = 0;
  };
  std::vector<Row> rows;
  double total = 0;
  for (const Record& r : records) {
    auto it =
        std::find_if(rows.begin(), rows.end(), [&](const Row& x) { return x.kind == r.kind && x.name == r.name; });
    if (it == rows.end()) it = rows.insert(rows.end(), Row{r.kind, r.name});
    ++it->calls;
    it->bytes += r.bytes;
    it->us += r.durationUs;
    it->flops += r.flops;
    total += r.durationUs;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.us > b.us; });
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "tessera profile: %zu operations, %.3f ms on %s (trace: %s)\n", records.size(),
                total / 1e3, info.device.c_str(), info.path.c_str());
  out += line;
  std::snprintf(line, sizeof line, "  %-10s %-24s %7s %11s %10s %7s %9s %8s\n", "kind", "name", "calls", "total ms",
                "mean us", "share", "GB/s", "TFLOP/s");
  out += line;
  for (const Row& r : rows) {
    std::string gbs = r.us > 0 ? number(r.bytes / (r.us * 1e3)) : "-";
    std::string tfs = r.us > 0 && r.flops > 0 ? number(r.flops / (r.us * 1e6)) : "-";
    std::snprintf(line, sizeof line, "  %-10s %-24s %7llu %11.3f %10.2f %6.1f%% %9s %8s\n", kindName(r.kind),
                  r.name.c_str(), static_cast<unsigned long long>(r.calls), r.us / 1e3, r.us / r.calls,
                  total > 0 ? 100.0 * r.us / total : 0.0, gbs.c_str(), tfs.c_str());
    out += line;
  }
  return out;
}

void printSummary(const std::vector<Record>& records, const TraceInfo& info) {
  std::fputs(summaryText(records, info).c_str(), stderr);
}

}  // namespace tessera::rt::profile

//===- ProfileReport.h - The profile's Chrome trace and summary table -------------*- C++ -*-===//
#ifndef TESSERA_RUNTIME_PROFILEREPORT_H
#define TESSERA_RUNTIME_PROFILEREPORT_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/Profiler.h"

namespace tessera::rt::profile {

// One timed operation: microseconds from the profile's first marker.
struct Record {
  Kind kind;
  std::string name;
  uint32_t stream;  // 0: the default stream
  double startUs, durationUs;
  uint64_t bytes;
  double flops;
  std::string detail;
};

struct TraceInfo {
  std::string path;
  std::string device;
  std::map<uint32_t, std::string> streams;
};

// The Chrome trace event format (JSON object with "traceEvents"): one complete ("X") event per
// record on the thread of its stream, with bytes, flops and rates in its args.
bool writeTrace(const std::vector<Record>& records, const TraceInfo& info, std::string& error);
// Per (kind, name): calls, total and mean time, share of the total, GB/s and TFLOP/s, on stderr.
void printSummary(const std::vector<Record>& records, const TraceInfo& info);
std::string summaryText(const std::vector<Record>& records, const TraceInfo& info);

}  // namespace tessera::rt::profile

#endif

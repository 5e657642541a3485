// Faults: `dist_fault kill|stall` under mpirun (or tessera-run). The last rank is killed
// (SIGKILL) or stalls (sleeps for three timeouts) while the others are in an all_reduce; each
// survivor must get TESSERA_ERROR_TIMEOUT or COMM_ABORTED within the communicator's timeout
// (TESSERA_FAULT_TIMEOUT seconds, default 2) plus a margin, see later calls on the aborted
// communicator fail at once, and leave (tessera_dist_finalize) without waiting for the peer.
// Each survivor prints "FAULT-RESULT rank <r> PASS|FAIL"; run-fault-test.sh checks those lines.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <unistd.h>

#include "DistTest.h"

using namespace disttest;

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "kill";
  double timeout = std::getenv("TESSERA_FAULT_TIMEOUT") ? std::atof(std::getenv("TESSERA_FAULT_TIMEOUT")) : 2.0;
  // The join may take longer than the fault's timeout on a loaded machine: init with a generous
  // one, then give the world communicator the short one under test.
  tessera_comm w = start(std::max(timeout, 60.0));
  require(tessera_comm_set_timeout(w, timeout), "tessera_comm_set_timeout");
  int32_t p = 1, r = 0;
  tessera_comm_size(w, &p);
  tessera_comm_rank(w, &r);
  if (p < 2) {
    std::printf("SKIP: the fault test needs at least 2 ranks\n");
    return 77;
  }
  size_t n = 1 << 16;
  Buffer b(n * 4);
  tessera_tensor t = b.view(TESSERA_F32, {int64_t(n)});
  tessera_collective_options o{nullptr, 0, 0, "grads"};
  require(tessera_all_reduce(w, &t, &t, TESSERA_REDUCE_SUM, &o), "first all_reduce");
  require(tessera_comm_synchronize(w, nullptr), "first synchronize");
  require(tessera_barrier(w, nullptr), "barrier");
  require(tessera_comm_synchronize(w, nullptr), "barrier synchronize");

  if (r == p - 1) {
    if (mode == "kill") {
      std::fflush(stdout);
      std::raise(SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(3 * timeout));
    // Late: the others are gone or have aborted; this rank fails too, within its timeout.
    tessera_status s = tessera_all_reduce(w, &t, &t, TESSERA_REDUCE_SUM, &o);
    if (s == TESSERA_SUCCESS) s = tessera_comm_synchronize(w, nullptr);
    std::printf("rank %d (stalled) then got %s\n", r, tessera_status_name(s));
    std::fflush(stdout);
    ::_exit(0);
  }

  auto start = std::chrono::steady_clock::now();
  tessera_status s = tessera_all_reduce(w, &t, &t, TESSERA_REDUCE_SUM, &o);
  if (s == TESSERA_SUCCESS)  // GPU ranks: enqueued; the wait reports it
    s = tessera_comm_synchronize(w, nullptr);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string msg = tessera_last_error_message();
  std::printf("rank %d: %s: got %s after %.2f s (timeout %.1f s): %s\n", r, mode.c_str(), tessera_status_name(s), took,
              timeout, msg.c_str());
  expect(s == TESSERA_ERROR_TIMEOUT || s == TESSERA_ERROR_COMM_ABORTED, "expected TIMEOUT or COMM_ABORTED");
  expect(took <= timeout + 3.0, "took %.2f s, more than the timeout of %.1f s plus 3 s", took, timeout);
  expect(msg.find("grads") != std::string::npos, "the message names the tensor");

  auto again = std::chrono::steady_clock::now();
  s = tessera_all_reduce(w, &t, &t, TESSERA_REDUCE_SUM, &o);
  expect(s == TESSERA_ERROR_COMM_ABORTED, "a later all_reduce gave %s", tessera_status_name(s));
  s = tessera_dist_finalize();
  double left = std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count();
  expect(s != TESSERA_SUCCESS && left < 1.0, "finalize after the abort gave %s after %.2f s", tessera_status_name(s),
         left);
  std::printf("FAULT-RESULT rank %d %s\n", r, failures() ? "FAIL" : "PASS");
  std::fflush(stdout);
  ::_exit(failures() ? 1 : 0);  // MPI was not finalized: leave without its exit handlers
}

//===- Comm.cpp - Issuing collectives, aborting communicators -------------------------------===//
#include "runtime/dist/Comm.h"

#include "runtime/Device.h"
#include "runtime/Profiler.h"
#include "runtime/Status.h"
#include "runtime/dist/Watchdog.h"

namespace tessera::dist {
using rt::concat;
using rt::fail;
}  // namespace tessera::dist

using namespace tessera::dist;

std::string tessera_comm_t::where() const {
  return concat("communicator '", name, "' (rank ", rank(), " of ", size(), ")");
}

tessera_status tessera_comm_t::live() {
  if (!aborted_.load()) return TESSERA_SUCCESS;
  std::lock_guard<std::mutex> lock(mutex_);
  return fail(TESSERA_ERROR_COMM_ABORTED, "communicator '", name, "' was aborted earlier: ", abortMessage_);
}

tessera_status tessera_comm_t::abortCause() {
  std::lock_guard<std::mutex> lock(mutex_);
  return fail(abortStatus_, abortMessage_);
}

void tessera_comm_t::abort(tessera_status why, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_.load()) return;
    abortStatus_ = why;
    abortMessage_ = message;
    aborted_.store(true);
  }
  transport->abort();
}

namespace tessera::dist {

namespace {

// A failure of a collective's body: the message gains the collective and communicator, and a
// timeout or transport failure aborts the communicator.
tessera_status failed(tessera_comm_t& c, const std::string& what, tessera_status st) {
  std::string msg = concat(what, " on ", c.where(), ": ", tessera_last_error_message());
  if (st == TESSERA_ERROR_TIMEOUT || st == TESSERA_ERROR_COMM_ABORTED) {
    msg += c.aborted() ? "" : "; the communicator is aborted";
    c.abort(st, msg);
  }
  return fail(st, msg);
}

}  // namespace

tessera_status issue(tessera_comm_t& c, tessera_stream stream, const std::string& what, uint64_t bytes, Body body) {
  TESSERA_TRY(c.live());
  ++c.collectives;
  std::string detail = rt::profile::enabled() ? concat("comm=", c.name, " ranks=", c.size()) : std::string();
  if (c.gpu) {
    TESSERA_TRY(c.backend->enterDevice());
    void* s = c.backend->nativeStream(stream);
    rt::profile::Scope scope(rt::profile::Kind::Collective, what.c_str(), stream);
    if (tessera_status st = body(s, Deadline::after(c.timeout)); st != TESSERA_SUCCESS) return failed(c, what, st);
    scope.finish(bytes, 0, detail);
    if (gpuStreamCapturing(s)) return TESSERA_SUCCESS;
    return watchGpuWork(c, s, what);
  }
  tessera_comm_t* cp = &c;
  return c.backend->hostCommand(stream, [cp, what, body, bytes, detail] {
    TESSERA_TRY(cp->live());
    rt::profile::Scope scope(rt::profile::Kind::Collective, what.c_str(), nullptr);
    if (tessera_status st = body(nullptr, Deadline::after(cp->timeout)); st != TESSERA_SUCCESS)
      return failed(*cp, what, st);
    scope.finish(bytes, 0, detail);
    return TESSERA_SUCCESS;
  });
}

tessera_status synchronizeComm(tessera_comm_t& c, tessera_stream stream) {
  if (!c.gpu) return c.aborted() ? c.abortCause() : TESSERA_SUCCESS;
  TESSERA_TRY(c.backend->enterDevice());
  return waitGpuStream(c, c.backend->nativeStream(stream), Deadline::after(c.timeout));
}

tessera_status makeComm(std::unique_ptr<Transport> t, std::string name, double timeout, bool checks,
                        std::unique_ptr<tessera_comm_t>& out) {
  auto c = std::make_unique<tessera_comm_t>();
  TESSERA_TRY(rt::activeBackend(c->backend));
  c->gpu = c->backend->kind() == TESSERA_DEVICE_GPU;
  if (c->gpu) {
    std::string why;
    c->ops = gpuDeviceOps(why);
    if (!c->ops) return fail(TESSERA_ERROR_NOT_SUPPORTED, "GPU collectives are unavailable: ", why);
  } else {
    c->ops = &cpuDeviceOps();
  }
  c->transport = std::move(t);
  c->name = std::move(name);
  c->timeout = timeout;
  c->checkSignatures = checks;
  out = std::move(c);
  return TESSERA_SUCCESS;
}

}  // namespace tessera::dist

//===- World.cpp - tessera_dist_init / finalize / abort -------------------------------------===//
#include "runtime/dist/World.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

#include "runtime/Device.h"
#include "runtime/Status.h"
#include "runtime/dist/MeshTypes.h"
#include "runtime/dist/Mpi.h"
#include "runtime/dist/Nccl.h"
#include "runtime/dist/Watchdog.h"

namespace tessera::dist {

using rt::concat;
using rt::fail;

WorldState& worldState() {
  static WorldState* w = new WorldState;  // never destroyed: handles may be released during exit
  return *w;
}

tessera_status requireInit(const char* fn) {
  if (!worldState().initialised) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": call tessera_dist_init first");
  return TESSERA_SUCCESS;
}

tessera_status checkComm(const char* fn, tessera_comm c) {
  TESSERA_TRY(requireInit(fn));
  if (!c || !worldState().comms.count(c))
    return fail(TESSERA_ERROR_INVALID_HANDLE, fn, ": null, unknown or destroyed communicator");
  return TESSERA_SUCCESS;
}

tessera_comm registerComm(std::unique_ptr<tessera_comm_t> c, bool owned) {
  c->owned = owned;
  c->seq = ++worldState().created;
  tessera_comm raw = c.release();
  worldState().comms.insert(raw);
  return raw;
}

void destroyComm(tessera_comm c) {
  unwatchComm(*c);
  if (c->side) c->ops->destroyStream(c->side);
  worldState().comms.erase(c);
  delete c;
}

namespace {

// TESSERA_DIST_TIMEOUT, like NCCL's variables, overrides what the program asked for, so a job can
// be given a shorter or longer limit without rebuilding it.
double timeoutFrom(const tessera_dist_options* opts) {
  if (const char* env = std::getenv("TESSERA_DIST_TIMEOUT")) {
    double v = std::atof(env);
    if (v > 0) return v;
  }
  if (opts && opts->timeout_s > 0) return opts->timeout_s;
  return 300;
}

// What every rank tells the others about its device at init.
struct DeviceReport {
  int32_t kind;
  int32_t ordinal;
  char host[64];
  char gpuReason[192];
};

std::string kindName(int32_t kind) { return kind == TESSERA_DEVICE_GPU ? "the GPU" : "the CPU executor"; }

// Every rank must run on the same kind of device, and GPU ranks of one host on different GPUs.
tessera_status checkDevices(Bootstrap& boot, rt::Backend& backend, const Deadline& d) {
  DeviceReport mine{};
  mine.kind = backend.kind();
  mine.ordinal = backend.deviceOrdinal();
  ::gethostname(mine.host, sizeof mine.host - 1);
  std::strncpy(mine.gpuReason, rt::gpuUnavailableReason().c_str(), sizeof mine.gpuReason - 1);
  std::vector<DeviceReport> all(boot.size());
  if (tessera_status st = boot.allGather(&mine, sizeof mine, all.data(), d); st != TESSERA_SUCCESS)
    return fail(st, "tessera_dist_init: the ranks did not all join within ", d.seconds, " s over ", boot.describe(),
                ": ", tessera_last_error_message());
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r].kind != all[0].kind) {
      const DeviceReport& cpu = all[0].kind == TESSERA_DEVICE_CPU ? all[0] : all[r];
      size_t cpuRank = all[0].kind == TESSERA_DEVICE_CPU ? 0 : r;
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_init: rank 0 runs on ", kindName(all[0].kind),
                  " but rank ", r, " on ", kindName(all[r].kind), " (rank ", cpuRank, ": ", cpu.gpuReason,
                  "); every rank must use the same kind of device: TESSERA_DEVICE=cpu for CPU ranks, or one rank "
                  "per GPU");
    }
  for (size_t a = 0; a < all.size(); ++a)
    for (size_t b = a + 1; b < all.size() && all[a].kind == TESSERA_DEVICE_GPU; ++b)
      if (all[a].ordinal == all[b].ordinal && std::strcmp(all[a].host, all[b].host) == 0)
        return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_init: ranks ", a, " and ", b, " on host ",
                    all[a].host, " both use GPU ", all[a].ordinal,
                    "; start one rank per GPU (the local rank picks the GPU)");
  return TESSERA_SUCCESS;
}

// Binds the local rank's GPU (unless TESSERA_DEVICE=cpu) and picks the runtime's device.
tessera_status selectDevice(int localRank, rt::Backend*& backend) {
  const char* device = std::getenv("TESSERA_DEVICE");
  if (!device || std::string(device) != "cpu") TESSERA_TRY(rt::requestGpuOrdinal(localRank));
  return rt::activeBackend(backend);
}

// The rendezvous of a torchrun-style launch: rank 0 serves it on MASTER_ADDR's interface, or on
// loopback when every rank is on this host (LOCAL_WORLD_SIZE = WORLD_SIZE), and every rank
// connects with the job's secret.
tessera_status joinRendezvous(WorldState& w, const Deadline& d) {
  const ProcessEnv& e = w.env;
  if (e.secret.empty())
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_init: rank ", e.rank,
                " has no TESSERA_DIST_SECRET: the rendezvous at MASTER_ADDR:MASTER_PORT admits only ranks that "
                "know the job's secret. tessera-run gives every rank one; with torchrun or another launcher, export "
                "the same random value to every rank (for example TESSERA_DIST_SECRET=$(od -An -tx8 -N16 "
                "/dev/urandom | tr -d ' '))");
  bool allLocal = e.localWorld > 0 && e.localWorld == e.world;
  std::string host = allLocal ? "127.0.0.1" : e.masterAddr;
  if (e.rank == 0) {
    store::Limits limits;
    limits.handshakeSeconds = limits.messageSeconds = std::min(30.0, w.timeout);
    TESSERA_TRY(TcpStoreServer::start(host, e.masterPort, e.secret, limits, w.server));
  }
  return TcpStoreClient::connect(host, e.masterPort, e.secret, d, w.client);
}

// Learns rank and size (and starts MPI or the rendezvous), returning the world's host channel.
tessera_status joinWorld(WorldState& w, const Deadline& d) {
  tessera_dist_info& info = w.info;
  switch (w.env.launcher) {
    case TESSERA_LAUNCHER_MPI: {
      if (!haveMpi())
        return fail(TESSERA_ERROR_NOT_SUPPORTED, "tessera_dist_init: started by an MPI launcher (", w.env.mpiVariable,
                    ") but libtessera_dist was built without MPI (install libopenmpi-dev and rebuild)");
      TESSERA_TRY(mpiInit(w.mpiInitialisedHere, info.rank, info.world_size));
      info.local_rank = w.env.localRank;
      info.local_world_size = w.env.localWorld;
      if (info.local_rank < 0) {
        int lr = 0, ls = 0;
        TESSERA_TRY(mpiLocalRank(lr, ls));
        info.local_rank = lr;
        info.local_world_size = ls;
      }
      return makeMpiWorldBootstrap(w.boot);
    }
    case TESSERA_LAUNCHER_ENV: {
      info.rank = w.env.rank;
      info.world_size = w.env.world;
      info.local_rank = w.env.localRank;
      info.local_world_size = w.env.localWorld;
      TESSERA_TRY(joinRendezvous(w, d));
      std::vector<int> members(info.world_size);
      for (int r = 0; r < info.world_size; ++r) members[r] = r;
      w.boot = makeStoreBootstrap(w.client, "tessera", std::move(members), info.rank);
      return TESSERA_SUCCESS;
    }
    default:
      info.rank = 0;
      info.world_size = 1;
      info.local_rank = 0;
      info.local_world_size = 1;
      w.boot = makeSoloBootstrap();
      return TESSERA_SUCCESS;
  }
}

tessera_status makeWorldTransport(WorldState& w, bool gpu, const Deadline& d, std::unique_ptr<Transport>& out) {
  if (gpu) {
    // NCCL's unique id travels over a split of the world channel, which the init keeps too.
    std::unique_ptr<Bootstrap> boot;
    TESSERA_TRY(w.boot->split(0, w.info.rank, d, boot));
    return makeNcclTransport(std::move(boot), d, out);
  }
  if (w.env.launcher == TESSERA_LAUNCHER_MPI) return makeMpiWorldTransport(out);
  out = makeSelfTransport();
  return TESSERA_SUCCESS;
}

tessera_status initWorld(WorldState& w, const tessera_dist_options* opts) {
  TESSERA_TRY(readProcessEnv([](const char* n) { return std::getenv(n); }, w.env));
  w.timeout = timeoutFrom(opts);
  const char* checksEnv = std::getenv("TESSERA_DIST_CHECKS");
  w.checks =
      !(opts && (opts->flags & TESSERA_DIST_NO_SIGNATURE_CHECKS)) && !(checksEnv && std::string(checksEnv) == "0");
  Deadline d = Deadline::after(w.timeout);
  // The device is chosen before the rendezvous when the local rank is known from the
  // environment, so that CPU ranks refuse a torchrun-style launch before meeting anyone.
  rt::Backend* backend = nullptr;
  if (w.env.launcher != TESSERA_LAUNCHER_MPI) {
    TESSERA_TRY(selectDevice(w.env.localRank, backend));
    if (backend->kind() == TESSERA_DEVICE_CPU && w.env.launcher == TESSERA_LAUNCHER_ENV && w.env.world > 1)
      return fail(TESSERA_ERROR_NOT_SUPPORTED, "tessera_dist_init: ", w.env.world,
                  " CPU ranks were started with torchrun-style variables, but CPU ranks move their data with MPI: "
                  "start them with mpirun -n ",
                  w.env.world, " (GPU ranks may use either launcher)");
  }
  TESSERA_TRY(joinWorld(w, d));
  w.info.launcher = w.env.launcher;
  if (!backend) TESSERA_TRY(selectDevice(w.info.local_rank, backend));
  bool gpu = backend->kind() == TESSERA_DEVICE_GPU;
  TESSERA_TRY(checkDevices(*w.boot, *backend, d));
  if (gpu) TESSERA_TRY(backend->enterDevice());

  std::unique_ptr<Transport> transport;
  TESSERA_TRY(makeWorldTransport(w, gpu, d, transport));
  w.info.transport = transport->kind();
  w.info.device_kind = backend->kind();
  w.info.gpu_ordinal = backend->deviceOrdinal();
  std::unique_ptr<tessera_comm_t> world;
  TESSERA_TRY(makeComm(std::move(transport), "world", w.timeout, w.checks, world));
  w.world.reset(registerComm(std::move(world), true));
  return TESSERA_SUCCESS;
}

}  // namespace

}  // namespace tessera::dist

using namespace tessera::dist;
using tessera::rt::concat;
using tessera::rt::fail;

extern "C" {

tessera_status tessera_dist_init(const tessera_dist_options* opts) {
  WorldState& w = worldState();
  if (w.initialised)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_init: already initialised (", tessera_dist_describe(),
                ")");
  if (opts && opts->struct_size && opts->struct_size < sizeof(tessera_dist_options))
    return fail(TESSERA_ERROR_ABI_MISMATCH, "tessera_dist_init: options of ", opts->struct_size, " bytes, expected ",
                sizeof(tessera_dist_options));
  tessera_status st = initWorld(w, opts);
  if (st != TESSERA_SUCCESS) {
    std::string msg = tessera_last_error_message();
    if (w.world) {
      w.comms.erase(w.world.get());
      w.world.reset();
    }
    w.boot.reset();
    w.client.reset();
    w.server.reset();
    return fail(st, msg);
  }
  w.initialised = true;
  return TESSERA_SUCCESS;
}

tessera_status tessera_dist_finalize(void) {
  TESSERA_TRY(requireInit("tessera_dist_finalize"));
  WorldState& w = worldState();
  bool aborted = false;
  for (tessera_comm c : w.comms) aborted = aborted || c->aborted();
  tessera_status cause = TESSERA_SUCCESS;
  std::string causeMessage;
  if (aborted)
    for (tessera_comm c : w.comms)
      if (c->aborted() && cause == TESSERA_SUCCESS) {
        cause = c->abortCause();
        causeMessage = tessera_last_error_message();
      }
  // NCCL communicators go in the same order on every rank (newest first), not in the order of
  // their addresses, which differs between ranks.
  while (!w.dtensors.empty()) tessera_dtensor_destroy(*w.dtensors.begin());
  std::vector<tessera_mesh> meshes(w.meshes.begin(), w.meshes.end());
  std::sort(meshes.begin(), meshes.end(), [](tessera_mesh a, tessera_mesh b) { return a->seq > b->seq; });
  for (tessera_mesh m : meshes) tessera_mesh_destroy(m);
  // Everyone reaches finalize before rank 0 closes the rendezvous (unless a rank is gone).
  tessera_status barrier = TESSERA_SUCCESS;
  if (!aborted && w.boot && w.info.world_size > 1) {
    char one = 1;
    std::vector<char> all(w.info.world_size);
    barrier = w.boot->allGather(&one, 1, all.data(), Deadline::after(w.timeout));
  }
  std::vector<tessera_comm> left(w.comms.begin(), w.comms.end());
  std::sort(left.begin(), left.end(), [](tessera_comm a, tessera_comm b) { return a->seq > b->seq; });
  for (tessera_comm c : left)
    if (c != w.world.get()) destroyComm(c);
  tessera_comm world = w.world.release();
  if (world) destroyComm(world);
  w.boot.reset();
  w.client.reset();  // this rank's connection to the rendezvous closes here
  // Rank 0 serves the rendezvous until the others have closed theirs too: they may still be
  // reading the barrier's last replies.
  if (w.server && !aborted && barrier == TESSERA_SUCCESS)
    w.server->waitForConnections(0, Deadline::after(std::min(w.timeout, 10.0)));
  w.server.reset();
  w.initialised = false;
  if (aborted)
    return fail(cause,
                "tessera_dist_finalize: left without waiting for the other ranks, since a communicator was "
                "aborted: ",
                causeMessage);
  if (barrier != TESSERA_SUCCESS) return barrier;
  if (w.mpiInitialisedHere) TESSERA_TRY(mpiFinalize());
  return TESSERA_SUCCESS;
}

tessera_status tessera_dist_get_info(tessera_dist_info* out) {
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_get_info: null output");
  TESSERA_TRY(requireInit("tessera_dist_get_info"));
  *out = worldState().info;
  return TESSERA_SUCCESS;
}

const char* tessera_dist_describe(void) {
  static thread_local std::string text;
  WorldState& w = worldState();
  if (!w.initialised) return "not initialised (tessera_dist_init)";
  const tessera_dist_info& i = w.info;
  static const char* launchers[] = {"as a single process", "by an MPI launcher", "with torchrun-style variables"};
  static const char* transports[] = {"locally", "over MPI", "over NCCL"};
  text = concat("rank ", i.rank, " of ", i.world_size, " (local ", i.local_rank, " of ",
                i.local_world_size ? std::to_string(i.local_world_size) : std::string("?"), "), started ",
                launchers[i.launcher], ", ", i.device_kind == TESSERA_DEVICE_GPU ? "GPU" : "CPU", " ranks ",
                transports[i.transport],
                i.device_kind == TESSERA_DEVICE_GPU ? concat(" (GPU ", i.gpu_ordinal, ")") : std::string());
  return text.c_str();
}

void tessera_dist_abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  WorldState& w = worldState();
  if (w.env.launcher == TESSERA_LAUNCHER_MPI && haveMpi()) mpiAbort(code);
  ::_exit(code);
}

}  // extern "C"

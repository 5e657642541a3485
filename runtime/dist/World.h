//===- World.h - The process group: launch, rendezvous, world communicator, handles --*- C++ -*-===//
#ifndef TESSERA_RUNTIME_DIST_WORLD_H
#define TESSERA_RUNTIME_DIST_WORLD_H

#include <memory>
#include <mutex>
#include <set>

#include "runtime/dist/Comm.h"
#include "runtime/dist/ProcessEnv.h"
#include "runtime/dist/TcpStore.h"

namespace tessera::dist {

struct WorldState {
  bool initialised = false;
  ProcessEnv env;
  tessera_dist_info info{};
  bool mpiInitialisedHere = false;
  double timeout = 300;
  bool checks = true;
  std::unique_ptr<TcpStoreServer> server;  // rank 0 of torchrun-style launches
  std::shared_ptr<TcpStoreClient> client;
  std::unique_ptr<Bootstrap> boot;  // the world's host channel when the transport has its own
  std::unique_ptr<tessera_comm_t> world;
  // Every live handle, so a destroyed or foreign one is INVALID_HANDLE instead of a crash.
  std::set<tessera_comm_t*> comms;
  std::set<tessera_mesh_t*> meshes;
  std::set<tessera_dtensor_t*> dtensors;
  uint64_t created = 0;  // communicators and meshes made so far (their seq)
};

WorldState& worldState();

// INVALID_ARGUMENT naming `fn` unless tessera_dist_init succeeded.
tessera_status requireInit(const char* fn);
// INVALID_HANDLE naming `fn` unless `c` is a live communicator.
tessera_status checkComm(const char* fn, tessera_comm c);
// Registers a communicator created by a split (owned: by a mesh).
tessera_comm registerComm(std::unique_ptr<tessera_comm_t> c, bool owned);
// Destroys a registered communicator.
void destroyComm(tessera_comm c);

}  // namespace tessera::dist

#endif

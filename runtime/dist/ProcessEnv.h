//===- ProcessEnv.h - Who started this process, and as which rank -----------------*- C++ -*-===//
//
// The process model of NCCL and PyTorch: one process per GPU (or CPU rank). A process learns its
// rank from its launcher's variables: MPI launchers (mpirun/mpiexec of Open MPI, MPICH, Intel
// MPI, Slurm's PMI) or the torchrun-style variables (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) that `tessera-run` and torchrun set. None of them:
// a world of one. A partial set is an error naming what is missing.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_PROCESSENV_H
#define TESSERA_RUNTIME_DIST_PROCESSENV_H

#include <functional>
#include <string>

#include "tessera/dist.h"

namespace tessera::dist {

struct ProcessEnv {
  tessera_dist_launcher launcher = TESSERA_LAUNCHER_SINGLE;
  std::string mpiVariable;  // the MPI launcher's variable that was seen (MPI launches)
  // ENV launches (MPI launches learn rank and size from MPI itself):
  int rank = 0, world = 1;
  int localRank = 0, localWorld = 0;  // 0: unknown
  std::string masterAddr;
  int masterPort = 0;
  // TESSERA_DIST_SECRET: what every rank proves to the rendezvous (tessera-run generates it).
  std::string secret;
};

using GetEnv = std::function<const char*(const char*)>;

// Reads the launcher's variables through `getenv` (tests pass their own).
tessera_status readProcessEnv(const GetEnv& getenv, ProcessEnv& out);

// The local rank an MPI launcher exports (Open MPI, MPICH/Hydra, Slurm), or -1.
int mpiLocalRankFromEnv(const GetEnv& getenv, int* localWorld);

}  // namespace tessera::dist

#endif

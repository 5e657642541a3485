//===- ProcessEnv.cpp - Launcher variables --------------------------------------------------===//
#include "runtime/dist/ProcessEnv.h"

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "runtime/Status.h"

namespace tessera::dist {

using rt::concat;
using rt::fail;

namespace {

// Variables by which MPI launchers mark their processes.
const char* const kMpiMarkers[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK",          "PMI_SIZE", "PMI_RANK",
                                   "MPI_LOCALNRANKS",      "MV2_COMM_WORLD_SIZE"};

const char* const kTorchVars[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};

bool parseInt(const char* text, long lo, long hi, int& out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno || *end || v < lo || v > hi) return false;
  out = static_cast<int>(v);
  return true;
}

}  // namespace

int mpiLocalRankFromEnv(const GetEnv& getenv, int* localWorld) {
  struct Pair {
    const char *rank, *size;
  } pairs[] = {{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
               {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
               {"SLURM_LOCALID", nullptr},
               {"MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"}};
  for (const Pair& p : pairs) {
    int r = 0;
    if (!parseInt(getenv(p.rank), 0, 1 << 24, r)) continue;
    int s = 0;
    if (localWorld) *localWorld = p.size && parseInt(getenv(p.size), 1, 1 << 24, s) ? s : 0;
    return r;
  }
  return -1;
}

tessera_status readProcessEnv(const GetEnv& getenv, ProcessEnv& out) {
  out = ProcessEnv();
  for (const char* v : kMpiMarkers)
    if (const char* value = getenv(v)) {
      out.launcher = TESSERA_LAUNCHER_MPI;
      out.mpiVariable = concat(v, "=", value);
      out.localRank = mpiLocalRankFromEnv(getenv, &out.localWorld);
      return TESSERA_SUCCESS;
    }

  std::vector<std::string> present, missing;
  for (const char* v : kTorchVars)
    if (getenv(v)) present.push_back(v);
  if (present.empty()) return TESSERA_SUCCESS;  // a world of one

  out.launcher = TESSERA_LAUNCHER_ENV;
  auto requireInt = [&](const char* name, long lo, long hi, int& dst) -> tessera_status {
    const char* text = getenv(name);
    if (!text) {
      missing.push_back(name);
      return TESSERA_SUCCESS;
    }
    if (!parseInt(text, lo, hi, dst))
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_init: ", name, "='", text, "' is not an integer in [",
                  lo, ", ", hi, "]");
    return TESSERA_SUCCESS;
  };
  TESSERA_TRY(requireInt("WORLD_SIZE", 1, 1 << 24, out.world));
  TESSERA_TRY(requireInt("RANK", 0, (1 << 24) - 1, out.rank));
  bool single = missing.empty() && out.world == 1;
  if (getenv("LOCAL_RANK"))
    TESSERA_TRY(requireInt("LOCAL_RANK", 0, (1 << 24) - 1, out.localRank));
  else if (out.world > 1)
    missing.push_back("LOCAL_RANK");
  if (getenv("LOCAL_WORLD_SIZE")) TESSERA_TRY(requireInt("LOCAL_WORLD_SIZE", 1, 1 << 24, out.localWorld));
  if (const char* addr = getenv("MASTER_ADDR"))
    out.masterAddr = addr;
  else if (!single)
    missing.push_back("MASTER_ADDR");
  if (getenv("MASTER_PORT"))
    TESSERA_TRY(requireInt("MASTER_PORT", 1, 65535, out.masterPort));
  else if (!single)
    missing.push_back("MASTER_PORT");

  if (!missing.empty()) {
    std::string have, need;
    for (const std::string& p : present) have += concat(have.empty() ? "" : ", ", p, "=", getenv(p.c_str()));
    for (const std::string& m : missing) need += concat(need.empty() ? "" : ", ", m);
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_init: a torchrun-style launch sets ", have, " but not ",
                need,
                " (RANK and WORLD_SIZE: this process and the number of processes; LOCAL_RANK: its "
                "index on this host, which picks its GPU; MASTER_ADDR and MASTER_PORT: where rank 0 "
                "listens for the rendezvous). Start the program with tessera-run -n N, torchrun or "
                "mpirun");
  }
  if (out.rank >= out.world)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_init: RANK=", out.rank,
                " is not below WORLD_SIZE=", out.world);
  if (out.localWorld && out.localRank >= out.localWorld)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_init: LOCAL_RANK=", out.localRank,
                " is not below LOCAL_WORLD_SIZE=", out.localWorld);
  if (const char* secret = getenv("TESSERA_DIST_SECRET")) out.secret = secret;
  if (single) out.launcher = TESSERA_LAUNCHER_SINGLE;
  return TESSERA_SUCCESS;
}

}  // namespace tessera::dist

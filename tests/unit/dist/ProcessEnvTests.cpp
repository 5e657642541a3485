// Launcher variables: MPI launchers, torchrun-style variables, a world of one, and messages that
// name what is missing or wrong.
#include <doctest/doctest.h>
#include <map>
#include <memory>
#include <string>

#include "runtime/dist/ProcessEnv.h"

using namespace tessera::dist;

namespace {
GetEnv envOf(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST_CASE("process env: no launcher variables is a world of one") {
  ProcessEnv e;
  REQUIRE(readProcessEnv(envOf({}), e) == TESSERA_SUCCESS);
  CHECK(e.launcher == TESSERA_LAUNCHER_SINGLE);
  CHECK(e.world == 1);
}

TEST_CASE("process env: torchrun-style variables") {
  ProcessEnv e;
  REQUIRE(readProcessEnv(envOf({{"RANK", "3"},
                                {"WORLD_SIZE", "4"},
                                {"LOCAL_RANK", "1"},
                                {"LOCAL_WORLD_SIZE", "2"},
                                {"MASTER_ADDR", "node0"},
                                {"MASTER_PORT", "29500"}}),
                         e) == TESSERA_SUCCESS);
  CHECK(e.launcher == TESSERA_LAUNCHER_ENV);
  CHECK(e.rank == 3);
  CHECK(e.world == 4);
  CHECK(e.localRank == 1);
  CHECK(e.localWorld == 2);
  CHECK(e.masterAddr == "node0");
  CHECK(e.masterPort == 29500);
  // WORLD_SIZE=1 needs no rendezvous.
  REQUIRE(readProcessEnv(envOf({{"RANK", "0"}, {"WORLD_SIZE", "1"}}), e) == TESSERA_SUCCESS);
  CHECK(e.launcher == TESSERA_LAUNCHER_SINGLE);
}

TEST_CASE("process env: a partial torchrun-style launch names what is missing") {
  ProcessEnv e;
  CHECK(readProcessEnv(envOf({{"RANK", "1"}, {"WORLD_SIZE", "2"}}), e) == TESSERA_ERROR_INVALID_ARGUMENT);
  std::string msg = tessera_last_error_message();
  CHECK(msg.find("a torchrun-style launch sets RANK=1, WORLD_SIZE=2 but not LOCAL_RANK, MASTER_ADDR, MASTER_PORT") !=
        std::string::npos);
  CHECK(msg.find("tessera-run -n N") != std::string::npos);
  CHECK(readProcessEnv(envOf({{"MASTER_PORT", "1234"}}), e) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error_message()).find("but not WORLD_SIZE, RANK, MASTER_ADDR") != std::string::npos);
}

TEST_CASE("process env: malformed values") {
  ProcessEnv e;
  std::map<std::string, std::string> base = {
      {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "29500"}};
  auto with = [&](const char* k, const char* v) {
    auto m = base;
    m[k] = v;
    return envOf(m);
  };
  CHECK(readProcessEnv(with("RANK", "two"), e) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error_message()) ==
        "tessera_dist_init: RANK='two' is not an integer in [0, 16777215]");
  CHECK(readProcessEnv(with("RANK", "2"), e) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error_message()) == "tessera_dist_init: RANK=2 is not below WORLD_SIZE=2");
  CHECK(readProcessEnv(with("MASTER_PORT", "70000"), e) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(readProcessEnv(with("WORLD_SIZE", "0"), e) == TESSERA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("process env: MPI launchers win and give the local rank") {
  ProcessEnv e;
  REQUIRE(readProcessEnv(envOf({{"OMPI_COMM_WORLD_SIZE", "4"},
                                {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                                {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                {"RANK", "junk"}}),
                         e) == TESSERA_SUCCESS);
  CHECK(e.launcher == TESSERA_LAUNCHER_MPI);
  CHECK(e.mpiVariable == "OMPI_COMM_WORLD_SIZE=4");
  CHECK(e.localRank == 2);
  CHECK(e.localWorld == 4);
  REQUIRE(readProcessEnv(envOf({{"PMI_RANK", "5"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}}), e) ==
          TESSERA_SUCCESS);
  CHECK(e.launcher == TESSERA_LAUNCHER_MPI);
  CHECK(e.localRank == 1);
  REQUIRE(readProcessEnv(envOf({{"PMIX_RANK", "0"}}), e) == TESSERA_SUCCESS);
  CHECK(e.localRank == -1);  // unknown: MPI_Comm_split_type finds it
}

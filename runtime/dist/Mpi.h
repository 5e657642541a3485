//===- Mpi.h - MPI: mpirun launches and the data plane of CPU ranks ----------------*- C++ -*-===//
//
// Every MPI call that waits on other ranks is nonblocking and polled against a deadline, and
// communicators return errors (MPI_ERRORS_RETURN), so a dead or stalled peer is a TIMEOUT here
// instead of a hang. MPI cannot cancel a collective: after a timeout the communicator is
// aborted for good, and tessera_dist_finalize skips MPI_Finalize, which would wait for the peer.
// Built only when CMake finds MPI (TESSERA_DIST_HAVE_MPI); otherwise every entry says so.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_MPI_H
#define TESSERA_RUNTIME_DIST_MPI_H

#include "runtime/dist/Transport.h"

namespace tessera::dist {

bool haveMpi();
// MPI_Init_thread unless the program initialised MPI itself (`initialisedHere` says which).
tessera_status mpiInit(bool& initialisedHere, int& rank, int& size);
tessera_status mpiFinalize();
[[noreturn]] void mpiAbort(int code);
// The rank's index among the ranks on its host (MPI_COMM_TYPE_SHARED) and their number.
tessera_status mpiLocalRank(int& localRank, int& localSize);
// Groups over MPI_COMM_WORLD (duplicated).
tessera_status makeMpiWorldBootstrap(std::unique_ptr<Bootstrap>& out);
tessera_status makeMpiWorldTransport(std::unique_ptr<Transport>& out);

}  // namespace tessera::dist

#endif

/*
 * libtessera_dist: meshes, distributed tensors, index launches and deterministic collectives.
 *
 * One process per GPU (or per CPU rank), started by `mpirun` or by a launcher that sets the
 * torchrun-style variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; `tessera-run`
 * is one). GPU ranks move data with NCCL, CPU ranks (the CPU executor) with MPI; both reduce in
 * the same fixed order, so a deterministic collective gives the same bits on either.
 * docs/abi.md section 9 explains every decision recorded here.
 *
 * Errors are values, as in runtime.h: every call returns a tessera_status and sets the calling
 * thread's message (tessera_last_error_message). A rank that dies or stalls makes the others
 * fail with TESSERA_ERROR_TIMEOUT within the communicator's timeout; the communicator is then
 * aborted and every later call on it fails with TESSERA_ERROR_COMM_ABORTED.
 */
#ifndef TESSERA_DIST_H
#define TESSERA_DIST_H

#include "tessera/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Process group                                                                               */
/* ------------------------------------------------------------------------------------------ */

typedef enum tessera_dist_launcher {
  TESSERA_LAUNCHER_SINGLE = 0, /* no launcher variables: a world of one process */
  TESSERA_LAUNCHER_MPI = 1,    /* mpirun / mpiexec (OMPI_*, PMI_*, PMIX_* variables) */
  TESSERA_LAUNCHER_ENV = 2     /* torchrun-style variables, TCP rendezvous at MASTER_ADDR:PORT */
} tessera_dist_launcher;

typedef enum tessera_dist_transport {
  TESSERA_TRANSPORT_SELF = 0, /* a world of one: collectives are local copies */
  TESSERA_TRANSPORT_MPI = 1,  /* CPU ranks */
  TESSERA_TRANSPORT_NCCL = 2  /* GPU ranks */
} tessera_dist_transport;

/* tessera_dist_options.flags */
#define TESSERA_DIST_NO_SIGNATURE_CHECKS 0x1u /* skip the per-collective agreement check (speed) */

typedef struct tessera_dist_options {
  uint32_t struct_size; /* sizeof(tessera_dist_options), or 0 */
  uint32_t flags;       /* TESSERA_DIST_* */
  /* Seconds a collective may wait for its peers before it fails with TESSERA_ERROR_TIMEOUT;
   * 0: 300. TESSERA_DIST_TIMEOUT in the environment overrides it. */
  double timeout_s;
} tessera_dist_options;

typedef struct tessera_dist_info {
  int32_t rank, world_size;
  int32_t local_rank, local_world_size; /* on this host; local_world_size 0 when unknown */
  int32_t launcher;                     /* tessera_dist_launcher */
  int32_t transport;                    /* tessera_dist_transport */
  int32_t device_kind;                  /* tessera_device_kind of every rank */
  int32_t gpu_ordinal;                  /* the CUDA device of this rank, -1 on CPU ranks */
} tessera_dist_info;

/* Joins the world: reads the launcher's variables (saying which are missing), initialises MPI
 * or the TCP rendezvous, binds the local GPU (GPU local_rank) before the runtime picks its
 * device, checks that every rank runs on the same device kind, and creates the world
 * communicator (NCCL unique id exchanged through MPI or the rendezvous). Call it before any
 * other runtime call; NULL options mean the defaults. Calling it twice is an error. */
tessera_status tessera_dist_init(const tessera_dist_options* opts);
/* Destroys every communicator, mesh and distributed tensor still alive and leaves the world
 * (MPI_Finalize when tessera_dist_init initialised MPI). After an abort it does not wait for
 * peers: it returns the abort's status. */
tessera_status tessera_dist_finalize(void);
tessera_status tessera_dist_get_info(tessera_dist_info* out);
/* "rank 1 of 4 (local 1 of 4), started by mpirun, CPU ranks over MPI" (or why not initialised). */
const char* tessera_dist_describe(void);
/* Ends the whole job with `code` (MPI_Abort under MPI, _exit otherwise): what a rank does after
 * a collective failed, since its peers may be stuck. Never returns. */
void tessera_dist_abort(int code);

/* ------------------------------------------------------------------------------------------ */
/* Communicators                                                                               */
/* ------------------------------------------------------------------------------------------ */

typedef struct tessera_comm_t* tessera_comm;

/* The communicator of every rank (owned by the runtime). */
tessera_status tessera_dist_world(tessera_comm* out);
/* Collective over `parent`: ranks with equal color >= 0 form a communicator, ordered by key and
 * then parent rank (ncclCommSplit, MPI_Comm_split); color < 0 gives *out = NULL. */
tessera_status tessera_comm_split(tessera_comm parent, int32_t color, int32_t key, const char* name, tessera_comm* out);
tessera_status tessera_comm_destroy(tessera_comm comm); /* not the world, not a mesh's */
tessera_status tessera_comm_rank(tessera_comm comm, int32_t* out);
tessera_status tessera_comm_size(tessera_comm comm, int32_t* out);
tessera_status tessera_comm_set_timeout(tessera_comm comm, double seconds);
/* Waits, at most the communicator's timeout, until the collectives enqueued on `stream` have
 * finished; a peer that died or stalled gives TIMEOUT and aborts the communicator. On CPU
 * ranks collectives finish before they return and this only reports an earlier abort. */
tessera_status tessera_comm_synchronize(tessera_comm comm, tessera_stream stream);
/* Aborts the communicator (ncclCommAbort; on MPI it is only marked): pending and later
 * collectives fail with COMM_ABORTED. */
tessera_status tessera_comm_abort(tessera_comm comm);

/* ------------------------------------------------------------------------------------------ */
/* Collectives                                                                                 */
/* ------------------------------------------------------------------------------------------ */

typedef enum tessera_reduce_op {
  TESSERA_REDUCE_SUM = 0,
  TESSERA_REDUCE_MAX = 1,
  TESSERA_REDUCE_MIN = 2,
  TESSERA_REDUCE_AVG = 3 /* floating-point dtypes: the sum divided by the rank count */
} tessera_reduce_op;

/* The fixed order in which a deterministic reduction combines the ranks' values. */
typedef enum tessera_reduce_order {
  TESSERA_ORDER_TREE = 0,      /* the default, the spec's algo="binary_tree": pairwise */
  TESSERA_ORDER_SEQUENTIAL = 1 /* ((x0 + x1) + x2) + ... in rank order */
} tessera_reduce_order;

/* tessera_collective_options.flags */
#define TESSERA_COLLECTIVE_NONDETERMINISTIC 0x1u /* deterministic=False: NCCL's own reductions */

/* A NULL pointer or a zeroed struct means: default stream, deterministic, tree order. */
typedef struct tessera_collective_options {
  tessera_stream stream;
  uint32_t flags;   /* TESSERA_COLLECTIVE_* */
  int32_t order;    /* tessera_reduce_order */
  const char* name; /* the tensor's name in messages; NULL: "tensor" */
} tessera_collective_options;

/* Tensors are dense (row-major) views of device memory (tessera_malloc; any memory on CPU
 * ranks). Every rank must pass the same shapes and dtypes: a disagreement is SHAPE_MISMATCH or
 * DTYPE_MISMATCH on every rank, naming the tensor and the ranks, before any data moves. */

/* recv = op over ranks of send. send may equal recv (in place). */
tessera_status tessera_all_reduce(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv, int32_t op,
                                  const tessera_collective_options* opts);
/* recv (size x send's elements) = every rank's send, in rank order. */
tessera_status tessera_all_gather(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                  const tessera_collective_options* opts);
/* recv = rank r's block r of op over ranks of send (send has size x recv's elements). */
tessera_status tessera_reduce_scatter(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                      int32_t op, const tessera_collective_options* opts);
/* recv = root's send on every rank (send is read on the root only; may equal recv). */
tessera_status tessera_broadcast(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                 int32_t root, const tessera_collective_options* opts);
/* Block j of rank i's send becomes block i of rank j's recv (blocks of numel/size elements). */
tessera_status tessera_all_to_all(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                  const tessera_collective_options* opts);
/* Point to point (pipeline stages): a send on rank a to b pairs with a recv on b from a. */
tessera_status tessera_send(tessera_comm comm, const tessera_tensor* send, int32_t peer,
                            const tessera_collective_options* opts);
tessera_status tessera_recv(tessera_comm comm, const tessera_tensor* recv, int32_t peer,
                            const tessera_collective_options* opts);
tessera_status tessera_barrier(tessera_comm comm, const tessera_collective_options* opts);

/* ------------------------------------------------------------------------------------------ */
/* Collectives overlapped with compute (the "collective matmul" of tensor parallelism)          */
/* ------------------------------------------------------------------------------------------ */

/* Called by an overlapped collective once per block, in the order the blocks become ready:
 * `block` is the rank the block belongs to, `view` a dense view of its memory, and work the
 * callback enqueues on `stream` (a kernel launch) runs once that block is there while the next
 * blocks still move. A failure stops the collective and aborts the communicator (the other ranks'
 * transfers can no longer complete; they fail within the timeout). */
typedef tessera_status (*tessera_block_fn)(void* user, int32_t block, const tessera_tensor* view,
                                           tessera_stream stream);

/* recv = all_gather(send), as tessera_all_gather, sent around a ring block by block on the
 * communicator's own stream; on_block(user, k, view of recv's block k shaped like send, stream)
 * is called for this rank's block first, then for each block as it arrives. The results of the
 * callbacks' work are those of an all_gather followed by the same work on every block. */
tessera_status tessera_all_gather_overlap(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                          tessera_block_fn on_block, void* user,
                                          const tessera_collective_options* opts);
/* recv = block rank() of op over the ranks' partial values, as tessera_reduce_scatter, where
 * produce(user, k, view, stream) writes this rank's partial of block k (recv's shape) into
 * `view`; each block moves to its rank as soon as it is produced (this rank's own last). The
 * reduction is the deterministic one, in the fixed order: the same bits as producing every
 * partial and calling tessera_reduce_scatter. */
tessera_status tessera_reduce_scatter_overlap(tessera_comm comm, const tessera_tensor* recv, int32_t op,
                                              tessera_block_fn produce, void* user,
                                              const tessera_collective_options* opts);

/* ------------------------------------------------------------------------------------------ */
/* Meshes                                                                                      */
/* ------------------------------------------------------------------------------------------ */

typedef struct tessera_mesh_t* tessera_mesh;

/* Collective over the world: named axes whose sizes multiply to the world size, ranks laid out
 * row-major (the last axis varies fastest), one communicator per axis. */
tessera_status tessera_mesh_create(const char* const* axes, const int64_t* shape, int32_t ndims, tessera_mesh* out);
tessera_status tessera_mesh_destroy(tessera_mesh mesh);
tessera_status tessera_mesh_ndims(tessera_mesh mesh, int32_t* out);
/* Size of an axis, and this rank's coordinate along it. */
tessera_status tessera_mesh_axis_size(tessera_mesh mesh, const char* axis, int64_t* out);
tessera_status tessera_mesh_coord(tessera_mesh mesh, const char* axis, int64_t* out);
/* The communicator along `axis` (the ranks that differ only in that coordinate; owned by the
 * mesh). */
tessera_status tessera_mesh_comm(tessera_mesh mesh, const char* axis, tessera_comm* out);
/* Collective over the world: the communicator over several axes at once (owned by the mesh,
 * created on the first call for that set of axes). */
tessera_status tessera_mesh_group_comm(tessera_mesh mesh, const char* const* axes, int32_t naxes, tessera_comm* out);

/* ------------------------------------------------------------------------------------------ */
/* Distributed tensors                                                                         */
/* ------------------------------------------------------------------------------------------ */

typedef struct tessera_dtensor_t* tessera_dtensor;

/* Which mesh axis partitions each dimension (NULL: replicated along it). A mesh axis partitions
 * at most one dimension; a partitioned extent must divide evenly by the axis size (uneven last
 * shards are refused, naming the sizes). */
typedef struct tessera_shard_spec {
  const char* axis[TESSERA_MAX_RANK];
} tessera_shard_spec;

/* Collective over the world: every rank must create the same tensor (name, dtype, global shape,
 * layout), else SHAPE_MISMATCH / DTYPE_MISMATCH naming the ranks. Allocates the local shard
 * (tessera_malloc, zeroed). */
tessera_status tessera_dtensor_create(tessera_mesh mesh, const char* name, int32_t dtype, int32_t rank,
                                      const int64_t* global_shape, const tessera_shard_spec* spec,
                                      tessera_dtensor* out);
tessera_status tessera_dtensor_destroy(tessera_dtensor t);
/* The local shard (a dense view of device memory). */
tessera_status tessera_dtensor_local(tessera_dtensor t, tessera_tensor* out);
/* The local part along `axis`: the local shard of a tensor partitioned over `axis` (an error
 * naming the tensor's layout otherwise). */
tessera_status tessera_dtensor_parts(tessera_dtensor t, const char* axis, tessera_tensor* out);
/* Global index of the local shard's first element, per dimension (rank entries). */
tessera_status tessera_dtensor_offset(tessera_dtensor t, int64_t* out);
tessera_status tessera_dtensor_global_shape(tessera_dtensor t, int64_t* out);

/* Redistribution over one mesh axis. dst has src's name-independent global shape and dtype and
 * the same layout except along one dimension:
 * all_gather: src partitioned over axis a along dimension d, dst replicated along d;
 * reduce_scatter: src replicated along d holding partial values, dst partitioned over a along d:
 * dst = op over the ranks of axis a of src, each keeping its part. */
tessera_status tessera_dtensor_all_gather(tessera_dtensor src, tessera_dtensor dst,
                                          const tessera_collective_options* opts);
tessera_status tessera_dtensor_reduce_scatter(tessera_dtensor src, tessera_dtensor dst, int32_t op,
                                              const tessera_collective_options* opts);
/* In place: the local shards of `t` become op over the ranks of `axis` (data-parallel
 * gradients: TESSERA_REDUCE_AVG over "dp"). */
tessera_status tessera_dtensor_all_reduce(tessera_dtensor t, const char* axis, int32_t op,
                                          const tessera_collective_options* opts);

/* ------------------------------------------------------------------------------------------ */
/* Index launches                                                                              */
/* ------------------------------------------------------------------------------------------ */

typedef enum tessera_dist_arg_kind {
  TESSERA_DIST_ARG_PLAIN = 0,  /* .arg as for tessera_launch (a scalar, or a local tensor) */
  TESSERA_DIST_ARG_PARTS = 1,  /* .dtensor's parts along the launch axis */
  TESSERA_DIST_ARG_GATHER = 2, /* tessera_index_launch_gathered: .dtensor, partitioned along
                                  dimension 0 over the launch axis, one rank's block per launch */
  TESSERA_DIST_ARG_ROWS = 3    /* tessera_index_launch_gathered: .arg's tensor, whose dimension 0
                                  spans the gathered rows, seen as the current block's rows */
} tessera_dist_arg_kind;

typedef struct tessera_dist_arg {
  int32_t kind; /* tessera_dist_arg_kind */
  int32_t reserved;
  tessera_dtensor dtensor;
  tessera_arg arg;
} tessera_dist_arg;

/* index_launch(axis=)(kernel)(parts...): every rank launches `kernel` on its parts. Before any
 * launch the kernel's shape symbols are bound from the mesh (a symbol named like a mesh axis is
 * its size) and from the distributed tensors (an extent `K/tp` of a dimension partitioned over
 * `tp` binds K to the global extent) and checked as tessera_launch checks them; a dimension
 * whose extent divides by a mesh axis that does not partition it is an error. */
tessera_status tessera_index_launch(tessera_mesh mesh, const char* axis, const tessera_kernel_desc* kernel,
                                    const tessera_launch_options* opts, const tessera_dist_arg* args,
                                    uint32_t num_args);

/* The tensor-parallel product with its all_gather overlapped (tessera_all_gather_overlap): one
 * argument is TESSERA_DIST_ARG_GATHER (a tensor partitioned by rows over `axis`, for example
 * the activations X[M/tp, K] of a column-parallel GEMM), and `kernel` is launched once per rank's
 * block of it as the block arrives, on the block and on the same rows of every
 * TESSERA_DIST_ARG_ROWS argument (the output Y[M, N/tp]); PLAIN and PARTS arguments are passed
 * to every launch. The result is bit for bit that of tessera_dtensor_all_gather followed by one
 * launch on the whole gathered tensor whenever the kernel computes each row from that row alone
 * (a GEMM does), and each launch's symbols are checked as tessera_index_launch checks them. */
tessera_status tessera_index_launch_gathered(tessera_mesh mesh, const char* axis, const tessera_kernel_desc* kernel,
                                             const tessera_launch_options* opts, const tessera_dist_arg* args,
                                             uint32_t num_args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_DIST_H */

/*
 * libtessera_rt: the Tessera runtime C API and the ABI between compiled modules and the runtime.
 *
 * Stable C interface. Compiled modules (`tesserac` output) and host programs depend only on
 * this header; docs/abi.md explains every decision recorded here. All structs are plain C,
 * naturally aligned, with fixed-width fields, so codegen can lay them out without a C compiler.
 *
 * Errors are values: every function returns a tessera_status; on failure the calling thread's
 * message (tessera_last_error_message) names the kernel, the parameter and the problem.
 * Nothing aborts.
 */
#ifndef TESSERA_RUNTIME_H
#define TESSERA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The registration structs' version. 3 appended resources and flops to tessera_kernel_desc, 4 the
 * GPU variants, 5 the variants' resources and the autotune candidates, 6 the variant chain, 7 the
 * chain's list of scratch matrices; the runtime still
 * registers modules of every version from TESSERA_ABI_MIN_VERSION on (their kernel descriptors
 * are shorter: struct_size says which fields exist, see tessera_module_kernel). */
#define TESSERA_ABI_VERSION 7
#define TESSERA_ABI_MIN_VERSION 2
#define TESSERA_MAX_RANK 8
/* tessera_tensor.device for memory that only the host can read. */
#define TESSERA_HOST (-1)

/* ------------------------------------------------------------------------------------------ */
/* Status                                                                                      */
/* ------------------------------------------------------------------------------------------ */

typedef enum tessera_status {
  TESSERA_SUCCESS = 0,
  TESSERA_ERROR_INVALID_ARGUMENT = 1, /* a runtime call got a bad value (count, kind, size) */
  TESSERA_ERROR_RANK_MISMATCH = 2,    /* tensor rank differs from the parameter's */
  TESSERA_ERROR_SHAPE_MISMATCH = 3,   /* extents disagree with the kernel's symbols */
  TESSERA_ERROR_DTYPE_MISMATCH = 4,   /* tensor or scalar dtype differs from the parameter's */
  TESSERA_ERROR_NULL_POINTER = 5,     /* null data pointer for a non-empty tensor */
  TESSERA_ERROR_HOST_POINTER = 6,     /* host memory passed to a GPU launch */
  TESSERA_ERROR_ALIASED_MUT = 7,      /* a mut tensor overlaps another tensor parameter */
  TESSERA_ERROR_INVALID_GRID = 8,     /* grid/group/shared memory the kernel or device cannot take */
  TESSERA_ERROR_NO_LAUNCH_SIZE = 9,   /* neither options nor parameters give a launch size */
  TESSERA_ERROR_NOT_FOUND = 10,       /* unknown module or kernel */
  TESSERA_ERROR_ALREADY_REGISTERED = 11,
  TESSERA_ERROR_ABI_MISMATCH = 12, /* module built against another TESSERA_ABI_VERSION */
  TESSERA_ERROR_OUT_OF_MEMORY = 13,
  TESSERA_ERROR_NO_DEVICE = 14,      /* TESSERA_DEVICE=gpu but no usable GPU */
  TESSERA_ERROR_NOT_SUPPORTED = 15,  /* e.g. kernel without code for the active device */
  TESSERA_ERROR_DRIVER = 16,         /* a CUDA driver call failed; message has its name */
  TESSERA_ERROR_KERNEL_FAULT = 17,   /* a kernel faulted; reported by the next runtime call */
  TESSERA_ERROR_NOT_READY = 18,      /* query: work still pending */
  TESSERA_ERROR_INVALID_HANDLE = 19, /* null or destroyed stream/event/graph */
  TESSERA_ERROR_TIMEOUT = 20,        /* distributed: a peer rank did not answer in time */
  TESSERA_ERROR_COMM_ABORTED = 21,   /* distributed: the communicator was aborted earlier */
  TESSERA_ERROR_INTERNAL = 99
} tessera_status;

/* The calling thread's message for the last failed call ("" if none). Valid until the next
 * failing call on this thread. */
const char* tessera_last_error_message(void);
/* Stable name of a status, e.g. "TESSERA_ERROR_SHAPE_MISMATCH". */
const char* tessera_status_name(tessera_status status);
/* Clears this thread's message (the runtime never clears it on success). */
void tessera_clear_error(void);

/* ------------------------------------------------------------------------------------------ */
/* Dtypes and tensor views                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Storage dtypes of DESIGN.md. Numbers are ABI: never renumber. */
typedef enum tessera_dtype {
  TESSERA_DTYPE_INVALID = 0,
  TESSERA_F64 = 1,
  TESSERA_F32 = 2,
  TESSERA_F16 = 3,
  TESSERA_BF16 = 4,
  TESSERA_F8_E4M3 = 5,
  TESSERA_F8_E5M2 = 6,
  TESSERA_F6_E2M3 = 7,
  TESSERA_F6_E3M2 = 8,
  TESSERA_F4_E2M1 = 9,
  TESSERA_I4 = 10,
  TESSERA_I8 = 11,
  TESSERA_I16 = 12,
  TESSERA_I32 = 13,
  TESSERA_I64 = 14,
  TESSERA_U8 = 15,
  TESSERA_U16 = 16,
  TESSERA_U32 = 17,
  TESSERA_U64 = 18,
  TESSERA_BOOL = 19,
  TESSERA_DTYPE_COUNT = 20
} tessera_dtype;

/* The dtype's short name, as the compiler prints it ("f32", "bf16", "fp8_e4m3", "i8", "u32",
 * "bool"); "invalid" for unknown values. */
const char* tessera_dtype_name(int32_t dtype);
/* Storage bits per element: 64..8, 6 for fp6 (four values in three bytes), 4 for fp4/int4
 * (two per byte, lower index in the low nibble); 0 for unknown values. */
uint32_t tessera_dtype_bits(int32_t dtype);

/* A host program's view of a tensor. Element (i0..ir-1) lives at element offset
 * sum(i_k * strides[k]) from data; strides are in elements and may be negative or zero.
 * Sub-byte dtypes address element offset e at bit e*bits. device is TESSERA_HOST or the
 * ordinal of the active device (0); on the CPU executor device memory is host memory. */
typedef struct tessera_tensor {
  void* data;
  int32_t dtype; /* tessera_dtype */
  int32_t rank;  /* 0..TESSERA_MAX_RANK */
  int64_t shape[TESSERA_MAX_RANK];
  int64_t strides[TESSERA_MAX_RANK];
  int32_t device;
  int32_t reserved; /* zero */
} tessera_tensor;

/* Fills a dense row-major view (strides from shape). */
void tessera_tensor_init(tessera_tensor* t, void* data, int32_t dtype, int32_t rank, const int64_t* shape,
                         int32_t device);
/* A view of the elements of a dense row-major tensor: `rank` extents, element strides (NULL: dense
 * row-major, then the element count must be src's: a reshape), starting at element `offset`.
 * Fails when src is not dense or the view reaches outside it. No copy. */
tessera_status tessera_tensor_view(const tessera_tensor* src, int64_t offset, int32_t rank, const int64_t* shape,
                                   const int64_t* strides, tessera_tensor* out);
/* Number of elements (product of the shape; 1 for rank 0). */
int64_t tessera_tensor_numel(const tessera_tensor* t);

/* ------------------------------------------------------------------------------------------ */
/* Kernel metadata: what tesserac emits per module (static data, registered at load time)     */
/* ------------------------------------------------------------------------------------------ */

typedef enum tessera_param_kind { TESSERA_PARAM_TENSOR = 0, TESSERA_PARAM_SCALAR = 1 } tessera_param_kind;
#define TESSERA_PARAM_MUT 0x1u /* tessera_param_desc.flags: the kernel writes this tensor */
/* ABI 3: a mut tensor the kernel never reads (profiling counts its bytes once, not twice). */
#define TESSERA_PARAM_WRITE_ONLY 0x2u

/* One dimension of a tensor parameter. */
typedef enum tessera_extent_kind {
  TESSERA_EXTENT_ANY = 0,    /* any size */
  TESSERA_EXTENT_CONST = 1,  /* exactly .value */
  TESSERA_EXTENT_SYMBOL = 2, /* binds/equals symbol .symbol */
  TESSERA_EXTENT_EXPR = 3    /* equals the expression .expr (after all SYMBOL dims bound) */
} tessera_extent_kind;

/* Expressions are postfix programs over int64: `K/tp` is {SYM K, SYM tp, DIV}. */
typedef enum tessera_expr_opcode {
  TESSERA_EXPR_CONST = 0,  /* push .value */
  TESSERA_EXPR_SYMBOL = 1, /* push symbol .symbol (must be bound) */
  TESSERA_EXPR_ADD = 2,
  TESSERA_EXPR_SUB = 3,
  TESSERA_EXPR_MUL = 4,
  TESSERA_EXPR_DIV = 5, /* exact: a launch fails if the division leaves a remainder */
  TESSERA_EXPR_CEIL_DIV = 6,
  TESSERA_EXPR_MOD = 7
} tessera_expr_opcode;

typedef struct tessera_expr_op {
  int32_t op;     /* tessera_expr_opcode */
  int32_t symbol; /* TESSERA_EXPR_SYMBOL */
  int64_t value;  /* TESSERA_EXPR_CONST */
} tessera_expr_op;

typedef struct tessera_extent {
  int32_t kind;                /* tessera_extent_kind */
  int32_t symbol;              /* SYMBOL: index into tessera_kernel_desc.symbols */
  int64_t value;               /* CONST */
  const tessera_expr_op* expr; /* EXPR */
  uint32_t expr_len;
  uint32_t reserved;
} tessera_extent;

typedef struct tessera_param_desc {
  const char* name;
  int32_t kind;                  /* tessera_param_kind */
  int32_t dtype;                 /* tessera_dtype */
  int32_t rank;                  /* tensors only */
  uint32_t flags;                /* TESSERA_PARAM_MUT */
  const tessera_extent* extents; /* rank entries; tensors only */
} tessera_param_desc;

/* tessera_kernel_desc.flags */
#define TESSERA_KERNEL_DETERMINISTIC 0x1u /* the default; cleared by deterministic=False */
#define TESSERA_KERNEL_GROUPED 0x2u       /* declares tile[(...)]; group_shape is valid */
#define TESSERA_KERNEL_CPU_SYNC 0x4u      /* CPU code calls ctx->ops (barriers, warp ops) */
#define TESSERA_KERNEL_CPU_PER_GROUP 0x8u /* cpu_entry runs once per group, looping tiles itself */
/* The code gives group g block g of grid_blocks (a tile.mma loop's output tiles, a static
 * whole-tensor program) without striding over the grid: an explicit grid must have exactly the
 * default number of groups, or blocks would be left out or written twice. */
#define TESSERA_KERNEL_EXACT_GRID 0x10u
/* Bits 8..11: log2 of the tiles each GPU thread runs (GPU_TILES V), only for kernels without a
 * group shape; 0 = one tile per thread. Hardware group g of T threads then runs tiles
 * [g*T*V, (g+1)*T*V) of the launch and the runtime starts ceil(launch_tiles / V) threads
 * (docs/abi.md 4). Any launch of at least that many threads is correct, so a runtime that
 * ignores these bits (one thread per tile) still runs such a kernel correctly. */
#define TESSERA_KERNEL_GPU_TILES_SHIFT 8
#define TESSERA_KERNEL_GPU_TILES_MASK 0xF00u

/* Argument block passed to compiled code for each tensor parameter, on both devices: the GPU
 * function takes it by value, the CPU function gets a pointer to it. Fixed rank so one LLVM
 * struct type serves every kernel. */
typedef struct tessera_kernel_tensor {
  void* data;
  int64_t shape[TESSERA_MAX_RANK];
  int64_t strides[TESSERA_MAX_RANK];
} tessera_kernel_tensor;

struct tessera_cpu_ctx;
/* CPU entry. args[i] points to parameter i (a tessera_kernel_tensor, or the scalar in its
 * dtype's natural size and layout); args[num_params] points to the int64_t launch_tiles. The
 * group's workspace is ctx->workspace. The GPU entry takes the parameters, then int64_t
 * launch_tiles, then the launch's workspace (void*, groups * workspace_group_bytes bytes) and
 * uint64_t workspace_group_bytes; group g's workspace starts at g * workspace_group_bytes. */
typedef void (*tessera_cpu_fn)(void** args, const struct tessera_cpu_ctx* ctx);

/* One slot of a kernel's per-group workspace: memory for the tile values the code keeps in
 * memory (their extents may be symbols bound at launch). A group's workspace holds every slot,
 * each rounded up to TESSERA_WORKSPACE_ALIGN bytes, in order; see tessera_workspace_bytes. */
#define TESSERA_WORKSPACE_ALIGN 256
typedef struct tessera_workspace_slot {
  uint32_t elem_bytes;
  uint32_t rank;
  const tessera_extent* extents; /* rank entries: CONST, SYMBOL or EXPR */
} tessera_workspace_slot;

typedef struct tessera_grid_block {
  int32_t param; /* a tensor parameter */
  int32_t axis;
  int64_t step;
} tessera_grid_block;

/* ABI 3: what a kernel's code uses on one GPU architecture, as tesserac read it from the cubin
 * (tesserac --resource-usage prints the same figures). Occupancy is for the kernel's default
 * group size and its shared_bytes. Instruction counts are static counts in the PTX. */
#define TESSERA_RESOURCES_ARCH_SPECIFIC 0x1u   /* built for sm_XXa */
#define TESSERA_RESOURCES_SHARED_RESERVED 0x2u /* static_shared_bytes holds the system's 1 KiB */
typedef struct tessera_kernel_resources {
  uint32_t sm;          /* 90 for sm_90 and sm_90a */
  uint32_t flags;       /* TESSERA_RESOURCES_* */
  uint32_t registers;   /* per thread */
  uint32_t stack_bytes; /* per thread */
  uint32_t spill_store_bytes;
  uint32_t spill_load_bytes;
  uint64_t static_shared_bytes;
  uint64_t local_bytes;
  uint32_t threads_per_group;
  uint32_t groups_per_sm; /* occupancy: groups resident on one multiprocessor */
  uint32_t warps_per_sm;
  uint32_t max_warps_per_sm;
  uint32_t mma_count;      /* mma.sync */
  uint32_t wgmma_count;    /* wgmma.mma_async */
  uint32_t tma_count;      /* cp.async.bulk* */
  uint32_t cp_async_count; /* cp.async.ca/cg */
  uint32_t ldmatrix_count;
  uint32_t reserved;
} tessera_kernel_resources;

/* ABI 4: a tensor map (CUtensorMap) the runtime encodes at launch for a GPU variant: a tensor
 * parameter of rank 2 to 5 whose innermost stride is 1, tiled in boxes of box[0] contiguous
 * elements by box[1] rows (1 along the outer dimensions, whose coordinates follow), with a
 * `swizzle`-byte shared-memory swizzle (32, 64 or 128) in the low 16 bits of `swizzle`. The high
 * 16 bits, when not 0, are the innermost extent the view must have (a variant specialised for it,
 * e.g. the attention form's head dimension): a view of another extent gets no map, so the variant
 * does not run (runtimes before this field refuse the unknown swizzle: the same outcome). */
#define TESSERA_TENSOR_MAP_SWIZZLE_MASK 0xFFFFu
typedef struct tessera_tensor_map_desc {
  int32_t param;
  uint32_t box[2];
  uint32_t swizzle;
} tessera_tensor_map_desc;

/* ABI 4: another GPU entry of a kernel: the sm_90a form of a tile.mma loop (a persistent,
 * warp-specialised wgmma + TMA kernel, docs/codegen.md). The runtime launches it instead of
 * gpu_entry when the device's compute capability is at least min_sm, the fatbin's image for the
 * device has the entry, the launch uses the default grid, and every tensor map can be encoded
 * (16-byte aligned data and row strides, contiguous rows); otherwise gpu_entry runs. It takes
 * gpu_entry's parameters followed by one 64-byte aligned CUtensorMap per tensor_maps entry, and
 * runs as a persistent grid of at most one group of block_threads per multiprocessor (it walks
 * the output tiles itself), in clusters of cluster_dim groups, with shared_bytes of dynamic
 * shared memory (docs/abi.md 4.3). */
typedef struct tessera_gpu_variant {
  const char* gpu_entry;
  uint32_t min_sm;
  uint32_t block_threads;
  uint64_t shared_bytes;
  const tessera_tensor_map_desc* tensor_maps;
  uint32_t num_tensor_maps;
  uint32_t cluster_dim; /* blocks per cluster along x (0 or 1: no cluster); the grid is a multiple */
} tessera_gpu_variant;

/* ABI 7: a scratch matrix of a variant chain: rows x cols elements of dtype, row-major and 16-byte
 * aligned (rows is shape[rows_axis] of parameter rows_param, cols likewise), the workspace
 * argument of step `step`, which writes it; a tensor map whose param is num_params + j reads
 * scratch matrix j. */
typedef struct tessera_chain_scratch {
  int32_t dtype; /* tessera_dtype */
  int32_t rows_param;
  uint32_t rows_axis;
  int32_t cols_param;
  uint32_t cols_axis;
  int32_t step;
} tessera_chain_scratch;

/* ABI 6: the GPU variants of a kernel that run together, in order, as one launch: the sm_90a
 * form of a whole-tensor program of several steps of products (examples/fused_mlp.tessera,
 * docs/abi.md 4.4). gpu_variants[0 .. num_steps) are the steps; the runtime launches all of them
 * on the launch's stream or none (then gpu_entry runs), with scratch matrices between them,
 * allocated for the launch (stream-ordered). ABI 6 modules have one scratch matrix (the fields
 * below num_scratch), passed as every step's workspace argument and read through a tensor map
 * whose param is num_params. ABI 7 modules list theirs in `scratch` (num_scratch of them; the
 * ABI 6 fields repeat scratch matrix 0). */
typedef struct tessera_variant_chain {
  uint32_t num_steps;
  int32_t scratch_dtype; /* tessera_dtype */
  int32_t rows_param;
  uint32_t rows_axis;
  int32_t cols_param;
  uint32_t cols_axis;
  /* ABI 7: present in modules of abi_version >= 7. */
  uint32_t num_scratch;
  uint32_t reserved;
  const tessera_chain_scratch* scratch;
} tessera_variant_chain;

struct tessera_kernel_desc;

/* ABI 5: the compiled candidates of an autotuned kernel (@kernel.autotune(space=...)). Candidate
 * 0 is the first value of every parameter and runs what the kernel's own entries run; every
 * candidate takes the kernel's parameters. Candidates the compiler could not show to give the
 * same bits, and candidates with the same code as an earlier one, are not compiled
 * (docs/abi.md "Autotuning"). */
#define TESSERA_AUTOTUNE_MAX_CANDIDATES 64
#define TESSERA_AUTOTUNE_SAME_BITS 0x1u /* every candidate computes the same bits (deterministic kernel) */
typedef struct tessera_autotune_desc {
  uint32_t num_params;                          /* tuned parameters */
  uint32_t num_candidates;                      /* 1 .. TESSERA_AUTOTUNE_MAX_CANDIDATES */
  const char* const* param_names;               /* num_params names */
  const int64_t* values;                        /* num_candidates rows of num_params values */
  const struct tessera_kernel_desc* candidates; /* num_candidates descriptors, struct_size apart */
  uint64_t code_hash;                           /* of every candidate's code: keys the tuning cache */
  uint32_t flags;                               /* TESSERA_AUTOTUNE_* */
  uint32_t reserved;
} tessera_autotune_desc;

typedef struct tessera_kernel_desc {
  uint32_t struct_size; /* sizeof(tessera_kernel_desc) */
  uint32_t flags;       /* TESSERA_KERNEL_* */
  const char* name;     /* as written in the source, e.g. "group_sum" */
  const tessera_param_desc* params;
  uint32_t num_params;
  uint32_t num_symbols;
  const char* const* symbols;              /* symbol names, e.g. {"n", "grid_groups"} */
  int32_t grid_symbol;                     /* index of `grid_groups` in symbols, or -1 */
  uint32_t group_shape[3];                 /* GROUPED only; unused dims are 1 */
  uint64_t shared_bytes;                   /* group shared memory the code uses (budget or computed) */
  const char* gpu_entry;                   /* function name in the module's fatbin, NULL if none */
  tessera_cpu_fn cpu_entry;                /* NULL if no CPU code */
  uint64_t cpu_stack_bytes;                /* per-tile fiber stack for CPU_SYNC kernels; 0 = default */
  const tessera_workspace_slot* workspace; /* per-group workspace layout (tile values) */
  uint32_t num_workspace;
  /* Default grid of block-partitioned kernels (`tile.range(T, axis=a, step=s)`, whole-tensor
   * tile programs, the tile.mma loop): the product over the entries of ceil(shape of parameter
   * `param` along `axis` / `step`) groups. Empty when the kernel has no such loops. */
  const struct tessera_grid_block* grid_blocks;
  uint32_t num_grid_blocks;
  uint32_t reserved;
  /* ABI 3: present when struct_size covers them (tessera_kernel_has_v3). */
  const tessera_kernel_resources* resources; /* one per GPU architecture of the fatbin */
  uint32_t num_resources;
  uint32_t flops_len;           /* 0: the work of a launch is unknown */
  const tessera_expr_op* flops; /* floating-point operations of one launch, over
                                 * the symbols (@kernel(flops="2*M*N*K")) */
  /* ABI 4: present when struct_size covers them (tessera_kernel_has_v4). */
  const tessera_gpu_variant* gpu_variants; /* tried in order before gpu_entry */
  uint32_t num_gpu_variants;
  uint32_t reserved4;
  /* ABI 5: present when struct_size covers them (tessera_kernel_has_v5). */
  const tessera_kernel_resources* variant_resources; /* num_gpu_variants entries: what each
                                                      * variant's code uses on its architecture */
  const tessera_autotune_desc* autotune;             /* NULL unless several candidates were compiled */
  /* ABI 6: present when struct_size covers it (tessera_kernel_has_v6). */
  const tessera_variant_chain* chain; /* NULL: the variants are alternatives, the first that applies runs */
} tessera_kernel_desc;

/* Size of an ABI 2 kernel descriptor: the fields up to `reserved`. */
#define TESSERA_KERNEL_DESC_V2_SIZE offsetof(tessera_kernel_desc, resources)
/* Size of an ABI 3 kernel descriptor: the fields up to `flops`. */
#define TESSERA_KERNEL_DESC_V3_SIZE offsetof(tessera_kernel_desc, gpu_variants)
/* Whether `k` carries the ABI 3 fields (resources, flops). */
static inline int tessera_kernel_has_v3(const tessera_kernel_desc* k) {
  return k->struct_size >= TESSERA_KERNEL_DESC_V3_SIZE;
}
/* Size of an ABI 4 kernel descriptor: the fields up to `reserved4`. */
#define TESSERA_KERNEL_DESC_V4_SIZE offsetof(tessera_kernel_desc, variant_resources)
/* Whether `k` carries the ABI 4 fields (gpu_variants). */
static inline int tessera_kernel_has_v4(const tessera_kernel_desc* k) {
  return k->struct_size >= TESSERA_KERNEL_DESC_V4_SIZE;
}
/* Size of an ABI 5 kernel descriptor: the fields up to `autotune`. */
#define TESSERA_KERNEL_DESC_V5_SIZE offsetof(tessera_kernel_desc, chain)
/* Whether `k` carries the ABI 5 fields (variant_resources, autotune). */
static inline int tessera_kernel_has_v5(const tessera_kernel_desc* k) {
  return k->struct_size >= TESSERA_KERNEL_DESC_V5_SIZE;
}
/* Whether `k` carries the ABI 6 field (chain). */
static inline int tessera_kernel_has_v6(const tessera_kernel_desc* k) {
  return k->struct_size >= sizeof(tessera_kernel_desc);
}
/* The variant chain of `k`, or NULL. */
static inline const tessera_variant_chain* tessera_kernel_chain(const tessera_kernel_desc* k) {
  return tessera_kernel_has_v6(k) ? k->chain : NULL;
}
/* Candidate i of an autotune table (descriptors are struct_size bytes apart). */
static inline const tessera_kernel_desc* tessera_autotune_candidate(const tessera_autotune_desc* t, uint32_t i) {
  return (const tessera_kernel_desc*)((const char*)t->candidates + (size_t)i * t->candidates[0].struct_size);
}
/* The autotune candidates of `k`, or NULL. */
static inline const tessera_autotune_desc* tessera_kernel_autotune(const tessera_kernel_desc* k) {
  return tessera_kernel_has_v5(k) ? k->autotune : NULL;
}

/* Bounds checking (tesserac --bounds-check, the default at -O0 and with -g): the kernel checks
 * every tensor and shared-memory index; a failed check skips the access (a load gives 0) and is
 * reported, and the launch returns TESSERA_ERROR_KERNEL_FAULT with "kernel 'k': group G faulted
 * on the GPU|CPU: bounds check: <site>: index I is outside [0, E) (tile T)". On the GPU the
 * first failing thread fills in the module's fault record (a global named TESSERA_FAULT_RECORD),
 * which the runtime reads after each launch of a BOUNDS_CHECKED kernel (the launch then waits
 * for the kernel) and at every synchronisation; on the CPU the code formats the message with
 * TESSERA_BOUNDS_FAULT_FORMAT and calls ctx->ops->fault. */
#define TESSERA_KERNEL_BOUNDS_CHECKED 0x20u
#define TESSERA_FAULT_RECORD "__tessera_fault_record"
#define TESSERA_BOUNDS_FAULT_FORMAT "bounds check: %s: index %lld is outside [0, %lld) (tile %lld)"
typedef struct tessera_fault_record {
  uint32_t flag;     /* 0: no fault; 1: the fields below hold the first one */
  uint32_t site_len; /* bytes of `site`, its NUL included */
  int64_t index, extent;
  int64_t group, tile; /* group_linear_id() and tile.linear_id() of the faulting tile */
  char site[192];      /* what was indexed: "tensor 'y', dimension 0" */
} tessera_fault_record;

/* Tiles per GPU thread of a kernel (1 unless TESSERA_KERNEL_GPU_TILES_* says otherwise). */
static inline uint32_t tessera_kernel_gpu_tiles(const tessera_kernel_desc* k) {
  return 1u << ((k->flags & TESSERA_KERNEL_GPU_TILES_MASK) >> TESSERA_KERNEL_GPU_TILES_SHIFT);
}

typedef struct tessera_module_desc {
  uint32_t abi_version; /* TESSERA_ABI_VERSION */
  uint32_t struct_size; /* sizeof(tessera_module_desc) */
  const char* name;     /* module name, e.g. "m" for m.tessera; unique per process */
  const void* fatbin;   /* cubin per arch + PTX, as cuModuleLoadData takes it; NULL = no GPU code */
  uint64_t fatbin_size;
  const tessera_kernel_desc* kernels;
  uint32_t num_kernels;
  uint32_t reserved;
} tessera_module_desc;

/* Kernel i of a module: descriptors are struct_size bytes apart, which is shorter than
 * sizeof(tessera_kernel_desc) in modules built for an older ABI. */
static inline const tessera_kernel_desc* tessera_module_kernel(const tessera_module_desc* m, uint32_t i) {
  return (const tessera_kernel_desc*)((const char*)m->kernels + (size_t)i * m->kernels[0].struct_size);
}

/* Called by a module's load-time constructor / unload-time destructor. The descriptor must
 * stay valid until unregistered. */
tessera_status tessera_register_module(const tessera_module_desc* module);
tessera_status tessera_unregister_module(const tessera_module_desc* module);
/* Finds a registered kernel by module and kernel name. */
tessera_status tessera_find_kernel(const char* module, const char* kernel, const tessera_kernel_desc** out);

/* ------------------------------------------------------------------------------------------ */
/* CPU executor ABI                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Shuffle modes (CUDA __shfl_*_sync with a full mask); width is a power of two <= 32 and
 * splits the warp into segments; a source lane outside the segment (or past the last tile of
 * a partial warp, or of a finished tile) yields the caller's own value. */
typedef enum tessera_shfl_mode {
  TESSERA_SHFL_IDX = 0,
  TESSERA_SHFL_UP = 1,
  TESSERA_SHFL_DOWN = 2,
  TESSERA_SHFL_XOR = 3
} tessera_shfl_mode;
typedef enum tessera_vote_mode {
  TESSERA_VOTE_ALL = 0,
  TESSERA_VOTE_ANY = 1,
  TESSERA_VOTE_BALLOT = 2
} tessera_vote_mode;

/* Runtime services for CPU_SYNC kernels running one tile per call. The runtime runs a group's
 * tiles as fibers on one thread, always resuming them in tile order 0..n-1, so every
 * interleaving, and therefore every result, is fixed. */
typedef struct tessera_cpu_ops {
  /* tbarrier(): returns once every unfinished tile of the group has called it. */
  void (*barrier)(const struct tessera_cpu_ctx* ctx);
  /* Barrier over the aligned partition of `size` tiles holding this tile:
   * cooperative_group(size=).sync(); size 32 is a warp sync. */
  void (*partition_sync)(const struct tessera_cpu_ctx* ctx, uint32_t size);
  /* Warp shuffle of 64 bits (narrower values travel in the low bits). */
  uint64_t (*warp_shuffle)(const struct tessera_cpu_ctx* ctx, uint64_t value, int32_t mode, int32_t lane_or_delta,
                           uint32_t width);
  /* Warp vote: ALL/ANY return 0 or 1, BALLOT the lane mask of true predicates. */
  uint32_t (*warp_vote)(const struct tessera_cpu_ctx* ctx, int32_t mode, int32_t predicate);
  /* Reports a fault (bounds check, assert). The launch fails with TESSERA_ERROR_KERNEL_FAULT
   * and the message of the lowest faulting group; the code must return after calling it. */
  void (*fault)(const struct tessera_cpu_ctx* ctx, const char* message);
  /* tile.clock(): nanoseconds of a steady (monotonic) clock; never decreases on one tile. */
  int64_t (*clock)(const struct tessera_cpu_ctx* ctx);
} tessera_cpu_ops;

typedef struct tessera_cpu_ctx {
  uint32_t tile_id[3];  /* tile in its group (0 for CPU_PER_GROUP entries) */
  uint32_t tile_linear; /* tile.linear_id() for grouped kernels */
  uint32_t group_shape[3];
  uint32_t group_tiles; /* group_tile_count() */
  uint32_t group_id[3];
  uint32_t grid_shape[3];
  uint64_t group_linear;  /* group_linear_id() */
  uint64_t grid_groups;   /* number of groups in the launch */
  uint64_t global_linear; /* launch.thread_id(); tile.linear_id() of ungrouped kernels */
  uint64_t launch_tiles;  /* tiles in the launch (ungrouped: exactly the element count) */
  void* shared;           /* the group's shared memory, zeroed, 64-byte aligned */
  uint64_t shared_bytes;
  const tessera_cpu_ops* ops;
  void* runtime;   /* opaque to compiled code */
  void* workspace; /* the group's workspace (tessera_kernel_desc.workspace), 256-byte aligned */
  uint64_t workspace_bytes;
} tessera_cpu_ctx;

/* Threads of the CPU executor (default: TESSERA_CPU_THREADS or the machine's cores). Results
 * do not depend on it. n == 0 restores the default. */
tessera_status tessera_cpu_set_threads(uint32_t n);
uint32_t tessera_cpu_threads(void);

/* ------------------------------------------------------------------------------------------ */
/* Device, memory, streams, events, graphs                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef enum tessera_device_kind { TESSERA_DEVICE_CPU = 0, TESSERA_DEVICE_GPU = 1 } tessera_device_kind;

/* Picks the device on first use: TESSERA_DEVICE=cpu|gpu, else the GPU if one is usable, else
 * the CPU. Every other call initialises implicitly; calling this first surfaces errors early. */
tessera_status tessera_init(void);
tessera_status tessera_get_device_kind(tessera_device_kind* out);
/* Human-readable device, e.g. "NVIDIA H100 (sm_90)" or "CPU executor (16 threads)". */
const char* tessera_device_name(void);
/* Why the GPU is not used ("" when it is): no driver, no device, TESSERA_DEVICE=cpu,
 * or "built without CUDA headers". */
const char* tessera_gpu_unavailable_reason(void);

/* Device memory of the active device (host memory on the CPU executor). */
tessera_status tessera_malloc(void** ptr, size_t bytes);
tessera_status tessera_free(void* ptr);

typedef struct tessera_stream_t* tessera_stream; /* NULL = the default stream */
/* Stream-ordered memory: usable by work on `stream` submitted after the call; freed once the
 * stream's earlier work is done (tessera_free also frees it, after the work of every blocking
 * stream). On the GPU it comes from the device's default memory pool, which keeps freed memory
 * for reuse; host entry points allocate their results and temporaries this way. */
tessera_status tessera_malloc_async(void** ptr, size_t bytes, tessera_stream stream);
tessera_status tessera_free_async(void* ptr, tessera_stream stream);

typedef struct tessera_event_t* tessera_event;
typedef struct tessera_graph_t* tessera_graph;

/* Copies between any of host memory and device memory (unified addressing): synchronous, or
 * ordered on `stream`. Async copies from host memory finish reading it before returning. */
tessera_status tessera_memcpy(void* dst, const void* src, size_t bytes);
tessera_status tessera_memcpy_async(void* dst, const void* src, size_t bytes, tessera_stream stream);
tessera_status tessera_memset(void* dst, int value, size_t bytes);

tessera_status tessera_stream_create(tessera_stream* out);
/* A handle for a CUDA stream another library created (a CUstream / cudaStream_t, e.g. PyTorch's
 * current stream; NULL is the legacy default stream): launches, copies and stream-ordered
 * allocations through it run on that stream. The handle does not own the stream:
 * tessera_stream_destroy releases only the handle, and the stream must outlive the work
 * submitted through it. NOT_SUPPORTED on the CPU executor. */
tessera_status tessera_stream_wrap(void* native, tessera_stream* out);
tessera_status tessera_stream_destroy(tessera_stream stream);
tessera_status tessera_stream_synchronize(tessera_stream stream);
/* Waits for all work on the device. Reports a kernel fault of earlier work. */
tessera_status tessera_synchronize(void);

tessera_status tessera_event_create(tessera_event* out);
tessera_status tessera_event_destroy(tessera_event event);
tessera_status tessera_event_record(tessera_event event, tessera_stream stream);
tessera_status tessera_event_synchronize(tessera_event event);
tessera_status tessera_stream_wait_event(tessera_stream stream, tessera_event event);
tessera_status tessera_event_elapsed_ms(float* ms, tessera_event start, tessera_event end);

/* Graph capture: between begin and end, launches and copies on `stream` are recorded, not run
 * (the default stream cannot capture). tessera_graph_launch replays them on a stream. */
tessera_status tessera_stream_begin_capture(tessera_stream stream);
tessera_status tessera_stream_end_capture(tessera_stream stream, tessera_graph* out);
tessera_status tessera_graph_launch(tessera_graph graph, tessera_stream stream);
tessera_status tessera_graph_destroy(tessera_graph graph);
/* Launches `captured` through `*cache` (the cache of a @jit(capture_graph=True) entry point):
 * when *cache is empty, `captured` becomes it; otherwise the cache's executable graph is updated
 * in place from `captured` (the same launches in the same order, new arguments: cuGraphExecUpdate
 * on the GPU) and `captured` is destroyed, or, where the update is refused, `captured` replaces
 * the cache. Then the cache is launched on `stream`. Calls with one cache are serialised. */
tessera_status tessera_graph_replay(tessera_graph* cache, tessera_graph captured, tessera_stream stream);
/* The arguments of one call of a capture_graph entry point, the key of its cached graph: every
 * tensor the call passes to its launches (parameters, results, temporaries: data address, dtype,
 * rank, extents and strides) and its scalar arguments (their bits, one int64 each). */
typedef struct tessera_graph_key {
  const tessera_tensor* const* tensors;
  uint32_t num_tensors;
  const int64_t* scalars;
  uint32_t num_scalars;
} tessera_graph_key;
/* When `*cache` holds a graph that tessera_graph_replay_keyed recorded with a key equal to `key`
 * and the same stream, launches it on `stream` and sets *launched to 1: the call's launches are
 * those of the cached graph, so they need not be captured again. Otherwise sets *launched to 0
 * and launches nothing. */
tessera_status tessera_graph_launch_cached(tessera_graph* cache, const tessera_graph_key* key, tessera_stream stream,
                                           int32_t* launched);
/* tessera_graph_replay, recording `key` (NULL: none, so no later call hits) with the cache. */
tessera_status tessera_graph_replay_keyed(tessera_graph* cache, tessera_graph captured, const tessera_graph_key* key,
                                          tessera_stream stream);
/* The pointer arguments of a host entry point (docs/abi.md 10), checked as its first step:
 * TESSERA_SUCCESS when none of the `count` pointers is null, else TESSERA_ERROR_NULL_POINTER with
 * the message naming the entry point and the first null argument (`names[i]`, as "parameter 'W'"
 * or "result pointer 'out0'"), as every failing call of the runtime sets one. */
tessera_status tessera_entry_check_pointers(const char* entry, const void* const* pointers, const char* const* names,
                                            uint32_t count);

/* ------------------------------------------------------------------------------------------ */
/* Launches                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Launch options; a NULL pointer or a zeroed struct means: default stream, default grid. */
typedef struct tessera_launch_options {
  tessera_stream stream;
  uint32_t grid[3];              /* groups per dimension; all 0 = DESIGN.md default rules */
  uint32_t group[3];             /* tiles per group; all 0 = the kernel's group shape (or the runtime's) */
  uint64_t dynamic_shared_bytes; /* added to the kernel's shared_bytes */
} tessera_launch_options;

/* One launch argument, in parameter order. Scalars carry their dtype and their bits in the
 * dtype's natural layout in value.bytes (use the tessera_arg_* helpers of runtime.hpp). */
typedef struct tessera_arg {
  int32_t kind;  /* tessera_param_kind */
  int32_t dtype; /* scalars */
  union {
    const tessera_tensor* tensor;
    int64_t i;
    uint64_t u;
    double f64;
    float f32;
    uint8_t bytes[8];
  } value;
} tessera_arg;

/* Argument builders for C callers and generated stubs. */
static inline tessera_arg tessera_arg_tensor(const tessera_tensor* t) {
  tessera_arg a;
  a.kind = TESSERA_PARAM_TENSOR;
  a.dtype = t ? t->dtype : TESSERA_DTYPE_INVALID;
  a.value.u = 0;
  a.value.tensor = t;
  return a;
}
/* `value` points to `size` (<= 8) bytes holding the scalar in dtype's layout. */
static inline tessera_arg tessera_arg_scalar(int32_t dtype, const void* value, size_t size) {
  tessera_arg a;
  size_t i;
  a.kind = TESSERA_PARAM_SCALAR;
  a.dtype = dtype;
  a.value.u = 0;
  for (i = 0; i < size && i < 8; ++i) a.value.bytes[i] = ((const uint8_t*)value)[i];
  return a;
}

/* Checks the arguments against the kernel's metadata and launches. On any check failure
 * nothing is launched and the message names kernel, parameter and problem. */
tessera_status tessera_launch(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                              const tessera_arg* args, uint32_t num_args);

/* A shape symbol bound before the arguments are checked: `K` from a distributed tensor's global
 * shape, `tp` from a mesh axis (tessera_index_launch does this). `source` says where the value
 * comes from, for messages ("mesh axis 'tp'"); NULL means "the caller". */
typedef struct tessera_symbol_binding {
  const char* symbol;
  int64_t value;
  const char* source;
} tessera_symbol_binding;

/* tessera_launch with symbols bound first. Bindings of symbols the kernel does not have are
 * ignored; a parameter dimension that disagrees with a bound symbol is SHAPE_MISMATCH naming
 * the binding's source, and expression extents (K/tp) may use bound symbols. */
tessera_status tessera_launch_bound(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                                    const tessera_arg* args, uint32_t num_args, const tessera_symbol_binding* bindings,
                                    uint32_t num_bindings);

/* ------------------------------------------------------------------------------------------ */
/* Autotuning (@kernel.autotune; docs/abi.md "Autotuning")                                     */
/* ------------------------------------------------------------------------------------------ */

/* Which candidate a launch of an autotuned kernel runs. The mode starts as TESSERA_AUTOTUNE
 * says (off, cached or on; unset: on):
 *   ON: the winner recorded for the launch's key (the kernel, its code, the device and the
 *     bound shape symbols), from memory or the on-disk cache ($XDG_CACHE_HOME/tessera/autotune,
 *     else ~/.cache/tessera/autotune); without one, the launch first searches (as
 *     tessera_autotune_search) and records the winner in both;
 *   CACHED: the recorded winner, else candidate 0; never times anything;
 *   OFF: candidate 0, the first value of every parameter.
 * A launch with an explicit grid, or on a stream that is capturing, never searches and runs
 * candidate 0 unless a winner is recorded (an explicit grid: always candidate 0). */
typedef enum tessera_autotune_mode {
  TESSERA_AUTOTUNE_OFF = 0,
  TESSERA_AUTOTUNE_CACHED = 1,
  TESSERA_AUTOTUNE_ON = 2
} tessera_autotune_mode;
tessera_status tessera_autotune_set_mode(tessera_autotune_mode mode);
tessera_autotune_mode tessera_autotune_get_mode(void);

typedef struct tessera_autotune_result {
  uint32_t best; /* the candidate recorded for these arguments' key */
  uint32_t num_candidates;
  /* Median time of each candidate (TESSERA_AUTOTUNE_REPEATS runs, default 5, after a warm-up);
   * negative when it was excluded: -1 its result bits differed from candidate 0's (kernels
   * with TESSERA_AUTOTUNE_SAME_BITS), -2 it could not be launched with these arguments. */
  float ms[TESSERA_AUTOTUNE_MAX_CANDIDATES];
} tessera_autotune_result;

/* The spec's autotune.search: runs every candidate of `kernel` on these arguments, restoring
 * the mut tensors before each run and at the end (so the call changes no argument), times
 * them, and records the fastest for the arguments' key in memory and on disk (not when the mode
 * is OFF). Synchronises the stream. Kernels without candidates have one. */
tessera_status tessera_autotune_search(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                                       const tessera_arg* args, uint32_t num_args, tessera_autotune_result* out);
/* Launches candidate `index` (0 .. count - 1) of `kernel`, whatever the mode. */
tessera_status tessera_launch_candidate(const tessera_kernel_desc* kernel, uint32_t index,
                                        const tessera_launch_options* opts, const tessera_arg* args, uint32_t num_args);
/* Candidates of `kernel` (1 for kernels that are not tuned), and the value of parameter
 * `param` in candidate `index`. */
uint32_t tessera_autotune_num_candidates(const tessera_kernel_desc* kernel);
tessera_status tessera_autotune_value(const tessera_kernel_desc* kernel, uint32_t index, const char* param,
                                      int64_t* out);

/* ------------------------------------------------------------------------------------------ */
/* Profiling                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* With TESSERA_PROFILE=path.json in the environment, every launch, copy, collective and graph
 * launch is recorded (stream, duration, bytes, flops) and at exit the runtime writes a Chrome
 * trace to path.json and prints a summary table on stderr (docs/tuning.md). This writes both
 * now, with everything recorded so far (NOT_SUPPORTED when profiling is off). */
tessera_status tessera_profile_flush(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_RUNTIME_H */

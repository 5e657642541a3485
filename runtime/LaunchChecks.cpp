//===- LaunchChecks.cpp - Checking a launch before anything runs -----------------------------===//
#include "runtime/LaunchChecks.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/Registry.h"
#include "runtime/Status.h"
#include "runtime/TensorView.h"

namespace tessera::rt {

namespace {

constexpr int64_t kUnbound = INT64_MIN;

// Shared context for the checks of one launch, so messages are uniform.
struct Checker {
  const tessera_kernel_desc& k;
  LaunchPlan& plan;
  std::vector<std::pair<uint32_t, int32_t>> boundBy;  // symbol -> (param, dim) that bound it
  std::vector<std::string> presetBy;                  // symbol -> source of a binding given before the checks

  // Where symbol `s` got its value, for messages.
  std::string origin(int32_t s) const {
    if (!presetBy[s].empty()) return presetBy[s];
    auto [bp, bd] = boundBy[s];
    return concat("parameter '", k.params[bp].name, "' dimension ", bd);
  }

  const char* sym(int32_t s) const { return k.symbols[s]; }

  template <typename... Parts>
  tessera_status err(tessera_status st, const Parts&... parts) const {
    return fail(st, "kernel '", k.name, "': ", parts...);
  }
  template <typename... Parts>
  tessera_status paramErr(tessera_status st, uint32_t p, const Parts&... parts) const {
    return fail(st, "kernel '", k.name, "': parameter '", k.params[p].name, "': ", parts...);
  }
};

// Renders a postfix extent expression in infix form for messages ("K/tp").
std::string exprString(const tessera_kernel_desc& k, const tessera_extent& e) {
  std::vector<std::string> stack;
  for (uint32_t i = 0; i < e.expr_len; ++i) {
    const tessera_expr_op& op = e.expr[i];
    if (op.op == TESSERA_EXPR_CONST) {
      stack.push_back(std::to_string(op.value));
      continue;
    }
    if (op.op == TESSERA_EXPR_SYMBOL) {
      stack.push_back(k.symbols[op.symbol]);
      continue;
    }
    if (stack.size() < 2) return "<malformed>";
    std::string b = stack.back();
    stack.pop_back();
    std::string a = stack.back();
    stack.pop_back();
    const char* names[] = {"", "", "+", "-", "*", "/", " ceil_div ", "%"};
    bool ok = op.op >= TESSERA_EXPR_ADD && op.op <= TESSERA_EXPR_MOD;
    std::string s =
        op.op == TESSERA_EXPR_CEIL_DIV ? "ceil_div(" + a + ", " + b + ")" : a + (ok ? names[op.op] : "?") + b;
    stack.push_back(i + 1 == e.expr_len ? s : "(" + s + ")");
  }
  return stack.size() == 1 ? stack.back() : "<malformed>";
}

tessera_status evalExpr(const Checker& c, uint32_t p, int32_t d, const tessera_extent& e, int64_t& out) {
  std::vector<int64_t> stack;
  auto where = [&] { return concat("dimension ", d, " extent ", exprString(c.k, e)); };
  for (uint32_t i = 0; i < e.expr_len; ++i) {
    const tessera_expr_op& op = e.expr[i];
    if (op.op == TESSERA_EXPR_CONST) {
      stack.push_back(op.value);
      continue;
    }
    if (op.op == TESSERA_EXPR_SYMBOL) {
      int64_t v = c.plan.symbols[op.symbol];
      if (v == kUnbound)
        return c.paramErr(TESSERA_ERROR_SHAPE_MISMATCH, p, where(), ": symbol '", c.sym(op.symbol),
                          "' is not bound by any parameter's shape");
      stack.push_back(v);
      continue;
    }
    if (stack.size() < 2) return c.paramErr(TESSERA_ERROR_INVALID_ARGUMENT, p, where(), ": malformed expression");
    int64_t b = stack.back();
    stack.pop_back();
    int64_t a = stack.back();
    stack.pop_back();
    bool isDiv = op.op == TESSERA_EXPR_DIV || op.op == TESSERA_EXPR_CEIL_DIV || op.op == TESSERA_EXPR_MOD;
    if (isDiv && b == 0) return c.paramErr(TESSERA_ERROR_SHAPE_MISMATCH, p, where(), ": division by zero");
    switch (op.op) {
      case TESSERA_EXPR_ADD: stack.push_back(a + b); break;
      case TESSERA_EXPR_SUB: stack.push_back(a - b); break;
      case TESSERA_EXPR_MUL: stack.push_back(a * b); break;
      case TESSERA_EXPR_MOD: stack.push_back(a % b); break;
      case TESSERA_EXPR_CEIL_DIV: stack.push_back((a + b - 1) / b); break;
      case TESSERA_EXPR_DIV:
        if (a % b) return c.paramErr(TESSERA_ERROR_SHAPE_MISMATCH, p, where(), ": ", a, " is not divisible by ", b);
        stack.push_back(a / b);
        break;
      default: return c.paramErr(TESSERA_ERROR_INVALID_ARGUMENT, p, where(), ": unknown opcode ", op.op);
    }
  }
  if (stack.size() != 1) return c.paramErr(TESSERA_ERROR_INVALID_ARGUMENT, p, where(), ": malformed expression");
  out = stack.back();
  return TESSERA_SUCCESS;
}

std::string dimsString(const uint32_t d[3]) { return concat("(", d[0], ", ", d[1], ", ", d[2], ")"); }

// Reads an optional 3-d size: all zero = unset; x > 0 with zero y/z means 1 (C's `{4}`).
tessera_status readDims(const Checker& c, const char* what, const uint32_t in[3], bool& given, uint32_t out[3]) {
  given = in[0] || in[1] || in[2];
  if (!given) return TESSERA_SUCCESS;
  if (!in[0]) return c.err(TESSERA_ERROR_INVALID_GRID, what, " ", dimsString(in), " has a zero x dimension");
  for (int i = 0; i < 3; ++i) out[i] = in[i] ? in[i] : 1;
  return TESSERA_SUCCESS;
}

tessera_status checkArgs(Checker& c, const tessera_arg* args, Backend& backend) {
  const tessera_kernel_desc& k = c.k;
  LaunchPlan& plan = c.plan;
  bool gpu = backend.kind() == TESSERA_DEVICE_GPU;
  for (uint32_t p = 0; p < k.num_params; ++p) {
    const tessera_param_desc& pd = k.params[p];
    const tessera_arg& a = args[p];
    if (pd.kind == TESSERA_PARAM_SCALAR) {
      if (a.kind != TESSERA_PARAM_SCALAR)
        return c.paramErr(TESSERA_ERROR_INVALID_ARGUMENT, p, "expected a scalar ", tessera_dtype_name(pd.dtype),
                          ", got a tensor");
      if (a.dtype != pd.dtype)
        return c.paramErr(TESSERA_ERROR_DTYPE_MISMATCH, p, "expected a scalar of dtype ", tessera_dtype_name(pd.dtype),
                          ", got ", tessera_dtype_name(a.dtype));
      std::memcpy(plan.scalars[p].data(), a.value.bytes, 8);
      continue;
    }
    if (a.kind != TESSERA_PARAM_TENSOR)
      return c.paramErr(TESSERA_ERROR_INVALID_ARGUMENT, p, "expected a tensor ", tessera_dtype_name(pd.dtype),
                        "[...], got a scalar");
    const tessera_tensor* t = a.value.tensor;
    if (!t) return c.paramErr(TESSERA_ERROR_NULL_POINTER, p, "null tensor view");
    if (t->dtype != pd.dtype)
      return c.paramErr(TESSERA_ERROR_DTYPE_MISMATCH, p, "expected dtype ", tessera_dtype_name(pd.dtype), ", got ",
                        tessera_dtype_name(t->dtype));
    if (t->rank != pd.rank)
      return c.paramErr(TESSERA_ERROR_RANK_MISMATCH, p, "expected rank ", pd.rank, ", got rank ", t->rank, " (shape ",
                        t->rank >= 0 && t->rank <= TESSERA_MAX_RANK ? shapeString(*t) : "?", ")");
    for (int32_t d = 0; d < t->rank; ++d)
      if (t->shape[d] < 0)
        return c.paramErr(TESSERA_ERROR_SHAPE_MISMATCH, p, "dimension ", d, " has negative size ", t->shape[d]);
    if (!byteSpanFits(*t))
      return c.paramErr(TESSERA_ERROR_INVALID_ARGUMENT, p, "view of shape ", shapeString(*t),
                        " spans more bytes than an address holds (extents times strides overflow "
                        "64 bits, or reach below address 0)");
    if (t->device != TESSERA_HOST && t->device != 0)
      return c.paramErr(TESSERA_ERROR_INVALID_ARGUMENT, p, "view names device ", t->device,
                        "; only TESSERA_HOST (-1) and the active device (0) exist");
    int64_t numel = tessera_tensor_numel(t);
    if (numel > 0 && !t->data)
      return c.paramErr(TESSERA_ERROR_NULL_POINTER, p, "null data pointer for a tensor of shape ", shapeString(*t));
    if (numel > 0 && gpu) {
      std::string why;
      if (t->device == TESSERA_HOST)
        return c.paramErr(TESSERA_ERROR_HOST_POINTER, p,
                          "host memory (view device is TESSERA_HOST) passed to a GPU launch; "
                          "copy it to memory from tessera_malloc");
      if (!backend.pointerUsable(t->data, why))
        return c.paramErr(TESSERA_ERROR_HOST_POINTER, p, "pointer ", t->data, " is not device memory (", why,
                          "); allocate it with tessera_malloc");
    }
    tessera_kernel_tensor& kt = plan.tensors[p];
    kt.data = t->data;
    for (int32_t d = 0; d < t->rank; ++d) {
      kt.shape[d] = t->shape[d];
      kt.strides[d] = t->strides[d];
    }
  }
  return TESSERA_SUCCESS;
}

// " (K = 60 from <source>, tp = 4 from <source>)" for the symbols of `e` bound by the caller.
std::string presetNote(const Checker& c, const tessera_extent& e) {
  std::string note;
  std::vector<int32_t> seen;
  for (uint32_t i = 0; i < e.expr_len; ++i) {
    int32_t s = e.expr[i].symbol;
    if (e.expr[i].op != TESSERA_EXPR_SYMBOL || c.presetBy[s].empty() ||
        std::find(seen.begin(), seen.end(), s) != seen.end())
      continue;
    seen.push_back(s);
    note += concat(note.empty() ? " (" : ", ", c.sym(s), " = ", c.plan.symbols[s], " from ", c.presetBy[s]);
  }
  return note.empty() ? note : note + ")";
}

tessera_status checkShapes(Checker& c, const tessera_arg* args) {
  const tessera_kernel_desc& k = c.k;
  // Pass 1: plain symbols, in parameter order; the first binds, the rest must agree.
  for (uint32_t p = 0; p < k.num_params; ++p) {
    const tessera_param_desc& pd = k.params[p];
    if (pd.kind != TESSERA_PARAM_TENSOR) continue;
    const tessera_tensor& t = *args[p].value.tensor;
    for (int32_t d = 0; d < pd.rank; ++d) {
      const tessera_extent& e = pd.extents[d];
      if (e.kind == TESSERA_EXTENT_CONST && t.shape[d] != e.value)
        return c.paramErr(TESSERA_ERROR_SHAPE_MISMATCH, p, "dimension ", d, " has size ", t.shape[d], ", expected ",
                          e.value, " (shape ", shapeString(t), ")");
      if (e.kind != TESSERA_EXTENT_SYMBOL) continue;
      int64_t& v = c.plan.symbols[e.symbol];
      if (v == kUnbound) {
        v = t.shape[d];
        c.boundBy[e.symbol] = {p, d};
      } else if (v != t.shape[d]) {
        return c.paramErr(TESSERA_ERROR_SHAPE_MISMATCH, p, "dimension ", d, " has size ", t.shape[d], " but symbol '",
                          c.sym(e.symbol), "' is ", v, " (bound by ", c.origin(e.symbol), ")");
      }
    }
  }
  // Pass 2: expression extents, now that every plain symbol is bound.
  for (uint32_t p = 0; p < k.num_params; ++p) {
    const tessera_param_desc& pd = k.params[p];
    if (pd.kind != TESSERA_PARAM_TENSOR) continue;
    const tessera_tensor& t = *args[p].value.tensor;
    for (int32_t d = 0; d < pd.rank; ++d) {
      const tessera_extent& e = pd.extents[d];
      if (e.kind != TESSERA_EXTENT_EXPR) continue;
      int64_t want = 0;
      TESSERA_TRY(evalExpr(c, p, d, e, want));
      if (want != t.shape[d])
        return c.paramErr(TESSERA_ERROR_SHAPE_MISMATCH, p, "dimension ", d, " has size ", t.shape[d], ", expected ",
                          exprString(k, e), " = ", want, presetNote(c, e));
    }
  }
  return TESSERA_SUCCESS;
}

// A mut tensor may overlap no other tensor parameter (byte spans may interleave where the rows
// are provably disjoint: column ranges of one matrix): not another mut one (the writes would
// race), and not a read-only one either, because compiled code assumes tensor parameters do not
// alias (codegen marks their accesses noalias and reorders loads of one tensor across stores to
// another; docs/abi.md 3).
tessera_status checkAliasing(const Checker& c, const tessera_arg* args) {
  const tessera_kernel_desc& k = c.k;
  auto isTensor = [&](uint32_t p) { return k.params[p].kind == TESSERA_PARAM_TENSOR; };
  auto isMut = [&](uint32_t p) { return (k.params[p].flags & TESSERA_PARAM_MUT) != 0; };
  for (uint32_t a = 0; a < k.num_params; ++a) {
    if (!isTensor(a)) continue;
    ByteSpan sa = byteSpan(*args[a].value.tensor);
    for (uint32_t b = a + 1; b < k.num_params; ++b) {
      if (!isTensor(b) || !(isMut(a) || isMut(b))) continue;
      ByteSpan sb = byteSpan(*args[b].value.tensor);
      if (!sa.overlaps(sb) || provablyDisjoint(*args[a].value.tensor, *args[b].value.tensor)) continue;
      auto spans = [&](const ByteSpan& x, const ByteSpan& y) {
        return concat(x.end - x.begin, " bytes at ", reinterpret_cast<void*>(x.begin), " and ", y.end - y.begin,
                      " bytes at ", reinterpret_cast<void*>(y.begin));
      };
      if (isMut(a) && isMut(b))
        return c.err(TESSERA_ERROR_ALIASED_MUT, "mut parameters '", k.params[a].name, "' and '", k.params[b].name,
                     "' overlap in memory (", spans(sa, sb), "); two mut tensors may not alias");
      uint32_t m = isMut(a) ? a : b, r = isMut(a) ? b : a;
      return c.err(TESSERA_ERROR_ALIASED_MUT, "mut parameter '", k.params[m].name, "' overlaps parameter '",
                   k.params[r].name, "' in memory (", spans(m == a ? sa : sb, m == a ? sb : sa),
                   "); a mut tensor may not alias another tensor parameter (pass a copy, or "
                   "write the result to a separate tensor)");
    }
  }
  return TESSERA_SUCCESS;
}

// Groups of the default grid of a block-partitioned kernel, and how they were counted.
uint64_t blockGroups(const tessera_kernel_desc& k, const tessera_arg* args, std::string& how) {
  uint64_t g = 1;
  for (uint32_t i = 0; i < k.num_grid_blocks; ++i) {
    const tessera_grid_block& b = k.grid_blocks[i];
    int64_t n = args[b.param].value.tensor->shape[b.axis];
    g *= (static_cast<uint64_t>(n) + b.step - 1) / b.step;
    how +=
        concat(i ? ", " : "", "blocks of ", b.step, " along dimension ", b.axis, " of '", k.params[b.param].name, "'");
  }
  return g;
}

// An explicit grid must match what the code addresses by group id: `grid_groups` is the number
// of groups, so a grid of another size than the tensor that binds it would index that tensor
// past its end (or leave entries unwritten); kernels that give group g block g (EXACT_GRID) need
// exactly one group per block.
tessera_status checkExplicitGrid(Checker& c, const uint32_t grid[3], const tessera_arg* args) {
  const tessera_kernel_desc& k = c.k;
  uint64_t groups = uint64_t(grid[0]) * grid[1] * grid[2];
  if (k.grid_symbol >= 0 && c.plan.symbols[k.grid_symbol] != kUnbound &&
      static_cast<uint64_t>(c.plan.symbols[k.grid_symbol]) != groups) {
    auto [bp, bd] = c.boundBy[k.grid_symbol];
    return c.err(TESSERA_ERROR_INVALID_GRID, "the launch asks for a grid ", dimsString(grid), " of ", groups,
                 " groups, but grid_groups is ", c.plan.symbols[k.grid_symbol], " (bound by parameter '",
                 k.params[bp].name, "' dimension ", bd, "); the kernel indexes by group, so the grid must have ",
                 c.plan.symbols[k.grid_symbol], " groups");
  }
  if ((k.flags & TESSERA_KERNEL_EXACT_GRID) && k.num_grid_blocks) {
    std::string how;
    uint64_t want = blockGroups(k, args, how);
    if (want != groups)
      return c.err(TESSERA_ERROR_INVALID_GRID, "the launch asks for a grid ", dimsString(grid), " of ", groups,
                   " groups, but the kernel gives group g block g of its output (", how, "), so it needs exactly ",
                   want, " groups (or no grid: the default)");
  }
  return TESSERA_SUCCESS;
}

tessera_status planGrid(Checker& c, const tessera_launch_options& o, const tessera_arg* args, const DeviceLimits& lim) {
  const tessera_kernel_desc& k = c.k;
  LaunchPlan& plan = c.plan;
  bool grouped = k.flags & TESSERA_KERNEL_GROUPED;
  bool gridGiven = false, groupGiven = false;
  uint32_t grid[3] = {1, 1, 1}, group[3] = {1, 1, 1};
  TESSERA_TRY(readDims(c, "grid", o.grid, gridGiven, grid));
  TESSERA_TRY(readDims(c, "group", o.group, groupGiven, group));
  plan.launchTiles = -1;

  if (grouped) {
    if (groupGiven && (group[0] != k.group_shape[0] || group[1] != k.group_shape[1] || group[2] != k.group_shape[2]))
      return c.err(TESSERA_ERROR_INVALID_GRID, "the kernel declares group shape ", dimsString(k.group_shape),
                   " but the launch asks for ", dimsString(group));
    for (int i = 0; i < 3; ++i) group[i] = k.group_shape[i];
    if (gridGiven) TESSERA_TRY(checkExplicitGrid(c, grid, args));
    if (!gridGiven && k.grid_symbol < 0 && k.num_grid_blocks) {
      // Block-partitioned kernels: one group per block (per combination of blocks).
      std::string how;
      uint64_t g = blockGroups(k, args, how);
      if (g > lim.maxGrid[0])
        return c.err(TESSERA_ERROR_INVALID_GRID, "grid of ", g, " groups (", how, ") exceeds the device limit of ",
                     lim.maxGrid[0]);
      grid[0] = static_cast<uint32_t>(g);
      plan.defaultGrid = true;
    } else if (!gridGiven) {
      if (k.grid_symbol < 0)
        return c.err(TESSERA_ERROR_NO_LAUNCH_SIZE,
                     "no launch size: the kernel has a group shape but no parameter names "
                     "grid_groups; pass a grid in the launch options");
      int64_t g = plan.symbols[k.grid_symbol];
      if (g == kUnbound)
        return c.err(TESSERA_ERROR_NO_LAUNCH_SIZE, "no launch size: symbol '", c.sym(k.grid_symbol),
                     "' is not bound by any parameter's shape; pass a grid in the launch options");
      if (g > lim.maxGrid[0])
        return c.err(TESSERA_ERROR_INVALID_GRID, "grid of ", g, " groups (from symbol '", c.sym(k.grid_symbol),
                     "') exceeds the device limit of ", lim.maxGrid[0]);
      grid[0] = static_cast<uint32_t>(g);
    }
  } else if (gridGiven) {
    if (!groupGiven)
      return c.err(TESSERA_ERROR_INVALID_GRID, "an explicit grid ", dimsString(grid),
                   " for a kernel without a group shape needs a group size (tiles per group) too");
  } else {
    // One tile per element of the first mut tensor; the runtime picks the hardware groups.
    uint32_t first = k.num_params;
    for (uint32_t p = 0; p < k.num_params; ++p)
      if (k.params[p].kind == TESSERA_PARAM_TENSOR && (k.params[p].flags & TESSERA_PARAM_MUT)) {
        first = p;
        break;
      }
    if (first == k.num_params)
      return c.err(TESSERA_ERROR_NO_LAUNCH_SIZE,
                   "no launch size: the kernel has no group shape and no mut tensor parameter "
                   "to size the launch by; pass a grid and group in the launch options");
    int64_t n = tessera_tensor_numel(args[first].value.tensor);
    uint64_t blocks = (static_cast<uint64_t>(n) + kDefaultGroupTiles - 1) / kDefaultGroupTiles;
    if (blocks > lim.maxGrid[0])
      return c.err(TESSERA_ERROR_INVALID_GRID, "launch of ", n, " tiles (one per element of '", k.params[first].name,
                   "') needs ", blocks, " groups, above the device limit of ", lim.maxGrid[0]);
    grid[0] = static_cast<uint32_t>(blocks);
    group[0] = static_cast<uint32_t>(n < kDefaultGroupTiles ? (n ? n : 1) : kDefaultGroupTiles);
    plan.launchTiles = n;
  }

  static const char* axes[] = {"x", "y", "z"};
  uint64_t tiles = 1;
  for (int i = 0; i < 3; ++i) {
    if (group[i] > lim.maxGroupDim[i])
      return c.err(TESSERA_ERROR_INVALID_GRID, "group ", dimsString(group), " exceeds the device limit of ",
                   lim.maxGroupDim[i], " tiles in ", axes[i]);
    if (grid[i] > lim.maxGrid[i])
      return c.err(TESSERA_ERROR_INVALID_GRID, "grid ", dimsString(grid), " exceeds the device limit of ",
                   lim.maxGrid[i], " groups in ", axes[i]);
    tiles *= group[i];
  }
  if (tiles > lim.maxGroupTiles)
    return c.err(TESSERA_ERROR_INVALID_GRID, "group ", dimsString(group), " has ", tiles,
                 " tiles, above the device limit of ", lim.maxGroupTiles);
  plan.sharedBytes = k.shared_bytes + o.dynamic_shared_bytes;
  if (plan.sharedBytes > lim.maxSharedBytes)
    return c.err(TESSERA_ERROR_INVALID_GRID, "needs ", plan.sharedBytes, " bytes of shared memory per group (",
                 k.shared_bytes, " declared + ", o.dynamic_shared_bytes, " dynamic), above the device limit of ",
                 lim.maxSharedBytes);
  for (int i = 0; i < 3; ++i) {
    plan.grid[i] = grid[i];
    plan.group[i] = group[i];
  }
  plan.groups = uint64_t(grid[0]) * grid[1] * grid[2];
  plan.groupTiles = static_cast<uint32_t>(tiles);
  if (plan.launchTiles < 0) plan.launchTiles = static_cast<int64_t>(plan.groups * tiles);
  return TESSERA_SUCCESS;
}

// Bytes of workspace per group: every slot at its extents, each rounded up to
// TESSERA_WORKSPACE_ALIGN (codegen lays the slots out the same way).
tessera_status planWorkspace(Checker& c) {
  const tessera_kernel_desc& k = c.k;
  uint64_t total = 0;
  for (uint32_t s = 0; s < k.num_workspace; ++s) {
    const tessera_workspace_slot& slot = k.workspace[s];
    uint64_t bytes = slot.elem_bytes;
    for (uint32_t d = 0; d < slot.rank; ++d) {
      const tessera_extent& e = slot.extents[d];
      int64_t v = kUnbound;
      if (e.kind == TESSERA_EXTENT_CONST)
        v = e.value;
      else if (e.kind == TESSERA_EXTENT_SYMBOL)
        v = c.plan.symbols[e.symbol];
      else if (e.kind == TESSERA_EXTENT_EXPR)
        TESSERA_TRY(evalExpr(c, 0, static_cast<int32_t>(d), e, v));
      if (v == kUnbound || v < 0)
        return c.err(TESSERA_ERROR_SHAPE_MISMATCH, "cannot size the memory of tile value ", s,
                     ": an extent is not bound by the parameters' shapes");
      bytes *= static_cast<uint64_t>(v);
    }
    total += (bytes + TESSERA_WORKSPACE_ALIGN - 1) / TESSERA_WORKSPACE_ALIGN * TESSERA_WORKSPACE_ALIGN;
  }
  c.plan.workspaceGroupBytes = total;
  return TESSERA_SUCCESS;
}

// Binds the caller's symbols before any argument is looked at; unknown names are ignored.
tessera_status presetSymbols(Checker& c, const tessera_symbol_binding* bindings, uint32_t n) {
  if (n && !bindings) return c.err(TESSERA_ERROR_INVALID_ARGUMENT, "null symbol bindings");
  for (uint32_t i = 0; i < n; ++i) {
    const tessera_symbol_binding& b = bindings[i];
    if (!b.symbol) return c.err(TESSERA_ERROR_INVALID_ARGUMENT, "symbol binding ", i, " has no name");
    std::string source = b.source ? b.source : "the caller";
    for (uint32_t s = 0; s < c.k.num_symbols; ++s) {
      if (std::strcmp(c.k.symbols[s], b.symbol) != 0) continue;
      int64_t& v = c.plan.symbols[s];
      if (v != kUnbound && v != b.value)
        return c.err(TESSERA_ERROR_SHAPE_MISMATCH, "symbol '", b.symbol, "' is bound to ", v, " by ", c.presetBy[s],
                     " and to ", b.value, " by ", source);
      if (b.value < 0)
        return c.err(TESSERA_ERROR_SHAPE_MISMATCH, "symbol '", b.symbol, "' is bound to the negative size ", b.value,
                     " by ", source);
      v = b.value;
      c.presetBy[s] = source;
    }
  }
  return TESSERA_SUCCESS;
}

}  // namespace

tessera_status planLaunch(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                          const tessera_arg* args, uint32_t numArgs, Backend& backend, LaunchPlan& plan,
                          const tessera_module_desc* module) {
  return planLaunchBound(kernel, opts, args, numArgs, nullptr, 0, backend, plan, module);
}

tessera_status planLaunchBound(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                               const tessera_arg* args, uint32_t numArgs, const tessera_symbol_binding* bindings,
                               uint32_t numBindings, Backend& backend, LaunchPlan& plan,
                               const tessera_module_desc* module) {
  if (!kernel) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_launch: null kernel descriptor");
  if (!module) module = Registry::instance().moduleOf(kernel);
  if (!module) {
    std::string why = Registry::instance().rejectionOf(kernel);
    if (!why.empty())
      return fail(TESSERA_ERROR_NOT_FOUND, "kernel '", kernel->name ? kernel->name : "<unnamed>",
                  "' is not registered: its module was rejected at registration: ", why);
    return fail(TESSERA_ERROR_NOT_FOUND, "kernel '", kernel->name ? kernel->name : "<unnamed>",
                "' is not registered (its module must call tessera_register_module first)");
  }
  const tessera_kernel_desc& k = *kernel;
  plan = LaunchPlan();
  plan.kernel = kernel;
  plan.module = module;
  plan.tensors.assign(k.num_params, tessera_kernel_tensor{});
  plan.scalars.assign(k.num_params, std::array<uint8_t, 8>{});
  plan.symbols.assign(k.num_symbols, kUnbound);
  Checker c{k, plan, std::vector<std::pair<uint32_t, int32_t>>(k.num_symbols), std::vector<std::string>(k.num_symbols)};

  if (numArgs != k.num_params)
    return c.err(TESSERA_ERROR_INVALID_ARGUMENT, "expected ", k.num_params, " arguments, got ", numArgs);
  if (numArgs && !args) return c.err(TESSERA_ERROR_INVALID_ARGUMENT, "null argument array");
  tessera_launch_options o{};
  if (opts) o = *opts;
  TESSERA_TRY(presetSymbols(c, bindings, numBindings));
  TESSERA_TRY(checkArgs(c, args, backend));
  TESSERA_TRY(checkShapes(c, args));
  TESSERA_TRY(checkAliasing(c, args));
  TESSERA_TRY(planGrid(c, o, args, backend.limits()));
  TESSERA_TRY(planWorkspace(c));
  plan.buildArgPtrs();
  return TESSERA_SUCCESS;
}

}  // namespace tessera::rt

//===- DTensor.cpp - Distributed tensors: shard specs, local shards, redistribution ----------===//
#include <cstring>

#include "runtime/Status.h"
#include "runtime/dist/Collectives.h"
#include "runtime/dist/MeshTypes.h"
#include "runtime/dist/Signature.h"
#include "runtime/dist/World.h"

using namespace tessera::dist;
using tessera::rt::concat;
using tessera::rt::fail;

std::string tessera_dtensor_t::layout() const {
  std::string s;
  for (int32_t d = 0; d < rank; ++d)
    if (axisOf[d] >= 0)
      s += concat(s.empty() ? "partitioned along " : ", ", "dimension ", d, " over '", mesh->axes[axisOf[d]], "'");
  return s.empty() ? "replicated" : s;
}

tessera_tensor tessera_dtensor_t::view() const {
  tessera_tensor t;
  tessera_tensor_init(&t, data, dtype, rank, local, 0);
  return t;
}

namespace tessera::dist {

tessera_status checkDTensor(const char* fn, tessera_dtensor t) {
  TESSERA_TRY(requireInit(fn));
  if (!t || !worldState().dtensors.count(t))
    return fail(TESSERA_ERROR_INVALID_HANDLE, fn, ": null, unknown or destroyed distributed tensor");
  return TESSERA_SUCCESS;
}

namespace {

int64_t product(const int64_t* v, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// The one dimension along which src and dst differ, src partitioned over an axis and dst not
// (gather: srcSharded) or the reverse (scatter); its axis.
tessera_status redistributionDim(const char* fn, tessera_dtensor src, tessera_dtensor dst, bool srcSharded, int& dim,
                                 int& axis) {
  if (src->mesh != dst->mesh)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": '", src->name, "' and '", dst->name,
                "' live on different meshes");
  if (src->dtype != dst->dtype)
    return fail(TESSERA_ERROR_DTYPE_MISMATCH, fn, ": '", src->name, "' is ", tessera_dtype_name(src->dtype), " but '",
                dst->name, "' is ", tessera_dtype_name(dst->dtype));
  if (src->rank != dst->rank || std::memcmp(src->global, dst->global, sizeof(int64_t) * src->rank) != 0)
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, fn, ": '", src->name, "' is ",
                typeString(src->dtype, src->rank, src->global), " but '", dst->name, "' is ",
                typeString(dst->dtype, dst->rank, dst->global), " (a redistribution keeps the global shape)");
  dim = -1;
  int differing = 0;
  for (int32_t d = 0; d < src->rank; ++d) {
    if (src->axisOf[d] == dst->axisOf[d]) continue;
    ++differing;
    int from = srcSharded ? src->axisOf[d] : dst->axisOf[d], to = srcSharded ? dst->axisOf[d] : src->axisOf[d];
    if (from >= 0 && to < 0) {
      dim = d;
      axis = from;
    }
  }
  if (differing != 1 || dim < 0)
    return fail(
        TESSERA_ERROR_INVALID_ARGUMENT, fn, ": '", src->name, "' (", src->layout(), ") and '", dst->name, "' (",
        dst->layout(), ") must differ in exactly one dimension, partitioned over a mesh axis in ",
        srcSharded ? "the source and replicated in the destination" : "the destination and replicated in the source");
  return TESSERA_SUCCESS;
}

}  // namespace

}  // namespace tessera::dist

extern "C" {

tessera_status tessera_dtensor_create(tessera_mesh mesh, const char* name, int32_t dtype, int32_t rank,
                                      const int64_t* global_shape, const tessera_shard_spec* spec,
                                      tessera_dtensor* out) {
  const char* fn = "tessera_dtensor_create";
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": null output");
  *out = nullptr;
  TESSERA_TRY(checkMesh(fn, mesh));
  auto t = std::make_unique<tessera_dtensor_t>();
  t->mesh = mesh;
  t->name = name && *name ? name : "tensor";
  uint32_t bits = tessera_dtype_bits(dtype);
  if (!bits) return fail(TESSERA_ERROR_DTYPE_MISMATCH, fn, ": '", t->name, "' has the unknown dtype ", dtype);
  if (rank < 0 || rank > TESSERA_MAX_RANK || (rank && !global_shape))
    return fail(TESSERA_ERROR_RANK_MISMATCH, fn, ": '", t->name, "' has rank ", rank, " (0..", TESSERA_MAX_RANK, ")");
  t->dtype = dtype;
  t->rank = rank;
  uint32_t used = 0;
  for (int32_t d = 0; d < rank; ++d) {
    t->global[d] = global_shape[d];
    t->axisOf[d] = -1;
    if (global_shape[d] < 0)
      return fail(TESSERA_ERROR_SHAPE_MISMATCH, fn, ": '", t->name, "' dimension ", d, " has negative size ",
                  global_shape[d]);
    const char* axis = spec ? spec->axis[d] : nullptr;
    int a = -1;
    if (axis) {
      TESSERA_TRY(findAxis(fn, mesh, axis, a));
      if (used & (1u << a))
        return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": '", t->name, "': mesh axis '", axis,
                    "' partitions two dimensions; an axis partitions at most one");
      used |= 1u << a;
      int64_t parts = mesh->shape[a];
      if (global_shape[d] % parts)
        return fail(TESSERA_ERROR_SHAPE_MISMATCH, fn, ": '", t->name, "' dimension ", d, " of size ", global_shape[d],
                    " does not divide evenly over mesh axis '", axis, "' of size ", parts, " (", global_shape[d], " = ",
                    parts, " x ", global_shape[d] / parts, " + ", global_shape[d] % parts,
                    "); uneven shards are not supported: pad the dimension to a multiple of ", parts);
      t->axisOf[d] = a;
    }
    t->local[d] = a >= 0 ? global_shape[d] / mesh->shape[a] : global_shape[d];
    t->offset[d] = a >= 0 ? mesh->coord[a] * t->local[d] : 0;
  }
  for (int32_t d = rank; d < TESSERA_MAX_RANK; ++d)
    if (spec && spec->axis[d])
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": '", t->name, "' has rank ", rank,
                  " but its shard spec names dimension ", d);
  uint64_t localBits = bits;
  for (int32_t d = 0; d < rank; ++d)
    if (__builtin_mul_overflow(localBits, uint64_t(t->local[d]), &localBits))
      return fail(TESSERA_ERROR_SHAPE_MISMATCH, fn, ": the local shard of '", t->name, "' (",
                  typeString(dtype, rank, t->local), ") has more bytes than memory can hold");
  if (localBits % 8)
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, fn, ": the local shard of '", t->name, "' would end inside a byte (",
                tessera_dtype_name(dtype), " values are packed); choose sizes whose shards fill whole bytes");
  t->bytes = localBits / 8;

  Signature sig = makeSignature(OpKind::DTensorCreate, t->name.c_str(), dtype, rank, t->global);
  std::strncpy(sig.layout, t->layout().c_str(), sizeof sig.layout - 1);
  TESSERA_TRY(agree(*mesh->world, sig, concat(fn, " of '", t->name, "'")));

  TESSERA_TRY(tessera_malloc(&t->data, t->bytes));
  if (tessera_status st = tessera_memset(t->data, 0, t->bytes); st != TESSERA_SUCCESS) {
    tessera_free(t->data);
    return st;
  }
  tessera_dtensor handle = t.release();
  worldState().dtensors.insert(handle);
  *out = handle;
  return TESSERA_SUCCESS;
}

tessera_status tessera_dtensor_destroy(tessera_dtensor t) {
  TESSERA_TRY(checkDTensor("tessera_dtensor_destroy", t));
  worldState().dtensors.erase(t);
  tessera_status st = tessera_free(t->data);
  delete t;
  return st;
}

tessera_status tessera_dtensor_local(tessera_dtensor t, tessera_tensor* out) {
  TESSERA_TRY(checkDTensor("tessera_dtensor_local", t));
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dtensor_local: null output");
  *out = t->view();
  return TESSERA_SUCCESS;
}

tessera_status tessera_dtensor_parts(tessera_dtensor t, const char* axis, tessera_tensor* out) {
  const char* fn = "tessera_dtensor_parts";
  TESSERA_TRY(checkDTensor(fn, t));
  int a = 0;
  TESSERA_TRY(findAxis(fn, t->mesh, axis, a));
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": null output");
  bool partitioned = false;
  for (int32_t d = 0; d < t->rank; ++d) partitioned = partitioned || t->axisOf[d] == a;
  if (!partitioned)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": '", t->name, "' is not partitioned over mesh axis '", axis,
                "' (it is ", t->layout(), "); pass its local view (tessera_dtensor_local) instead");
  *out = t->view();
  return TESSERA_SUCCESS;
}

tessera_status tessera_dtensor_offset(tessera_dtensor t, int64_t* out) {
  TESSERA_TRY(checkDTensor("tessera_dtensor_offset", t));
  if (!out && t->rank) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dtensor_offset: null output");
  std::memcpy(out, t->offset, sizeof(int64_t) * t->rank);
  return TESSERA_SUCCESS;
}

tessera_status tessera_dtensor_global_shape(tessera_dtensor t, int64_t* out) {
  TESSERA_TRY(checkDTensor("tessera_dtensor_global_shape", t));
  if (!out && t->rank) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dtensor_global_shape: null output");
  std::memcpy(out, t->global, sizeof(int64_t) * t->rank);
  return TESSERA_SUCCESS;
}

tessera_status tessera_dtensor_all_gather(tessera_dtensor src, tessera_dtensor dst,
                                          const tessera_collective_options* opts) {
  const char* fn = "tessera_dtensor_all_gather";
  TESSERA_TRY(checkDTensor(fn, src));
  TESSERA_TRY(checkDTensor(fn, dst));
  int d = 0, a = 0;
  TESSERA_TRY(redistributionDim(fn, src, dst, true, d, a));
  tessera_comm c = src->mesh->axisComms[a];
  size_t outer = static_cast<size_t>(product(src->local, 0, d));
  size_t inner = src->bytes / (outer ? outer : 1);  // bytes of one row of the partitioned block
  tessera_tensor s = src->view();
  tessera_collective_options o = opts ? *opts : tessera_collective_options{};
  if (!o.name) o.name = src->name.c_str();
  if (outer <= 1) {  // the parts are contiguous in dst: a plain all_gather
    tessera_tensor r = dst->view();
    tessera_tensor flat;
    int64_t n = tessera_tensor_numel(&r);
    tessera_tensor_init(&flat, r.data, r.dtype, 1, &n, 0);
    tessera_tensor sflat;
    int64_t m = tessera_tensor_numel(&s);
    tessera_tensor_init(&sflat, s.data, s.dtype, 1, &m, 0);
    return tessera_all_gather(c, &sflat, &flat, &o);
  }
  // Gather the blocks, then interleave them: rank r's rows go to columns [r*inner, (r+1)*inner)
  // of every row of dst.
  Signature sig = makeSignature(OpKind::AllGather, o.name, s.dtype, s.rank, s.shape);
  TESSERA_TRY(checkComm(fn, c));
  TESSERA_TRY(agree(*c, sig, concat("all_gather of '", o.name, "'")));
  char *in = static_cast<char*>(src->data), *out = static_cast<char*>(dst->data);
  size_t bytes = src->bytes;
  int p = c->size();
  return issue(*c, o.stream, concat("all_gather of '", o.name, "'"), dst->bytes,
               [c, in, out, bytes, outer, inner, p](void* stream, const Deadline& dl) -> tessera_status {
                 void* staging = nullptr;
                 TESSERA_TRY(c->ops->allocTemp(&staging, bytes * p, stream));
                 tessera_status st = allGather(*c, in, staging, bytes, stream, dl);
                 for (int r = 0; r < p && st == TESSERA_SUCCESS; ++r)
                   st = c->ops->copy2D(out + r * inner, inner * p, static_cast<char*>(staging) + r * bytes, inner,
                                       inner, outer, stream);
                 c->ops->freeTemp(staging, stream);
                 return st;
               });
}

tessera_status tessera_dtensor_reduce_scatter(tessera_dtensor src, tessera_dtensor dst, int32_t op,
                                              const tessera_collective_options* opts) {
  const char* fn = "tessera_dtensor_reduce_scatter";
  TESSERA_TRY(checkDTensor(fn, src));
  TESSERA_TRY(checkDTensor(fn, dst));
  int d = 0, a = 0;
  TESSERA_TRY(redistributionDim(fn, src, dst, false, d, a));
  tessera_comm c = src->mesh->axisComms[a];
  tessera_collective_options o = opts ? *opts : tessera_collective_options{};
  if (!o.name) o.name = src->name.c_str();
  size_t outer = static_cast<size_t>(product(dst->local, 0, d));
  tessera_tensor s = src->view(), r = dst->view();
  int64_t sn = tessera_tensor_numel(&s), rn = tessera_tensor_numel(&r);
  tessera_tensor sflat, rflat;
  tessera_tensor_init(&sflat, s.data, s.dtype, 1, &sn, 0);
  tessera_tensor_init(&rflat, r.data, r.dtype, 1, &rn, 0);
  if (outer <= 1) return tessera_reduce_scatter(c, &sflat, &rflat, op, &o);
  // Gather each rank's block (a column range of every row) into a contiguous staging block,
  // then reduce-scatter the staging buffer.
  int p = c->size();
  size_t inner = dst->bytes / outer;
  size_t bytes = dst->bytes;
  char *in = static_cast<char*>(src->data), *out = static_cast<char*>(dst->data);
  TESSERA_TRY(checkComm(fn, c));
  std::string why;
  if (!reducible(s.dtype, op, why)) return fail(TESSERA_ERROR_NOT_SUPPORTED, fn, ": '", src->name, "': ", why);
  Signature sig = makeSignature(OpKind::ReduceScatter, o.name, r.dtype, r.rank, r.shape);
  sig.param[0] = op;
  sig.param[2] = o.order;
  sig.param[3] = (o.flags & TESSERA_COLLECTIVE_NONDETERMINISTIC) ? 1 : 0;
  TESSERA_TRY(agree(*c, sig, concat("reduce_scatter of '", o.name, "'")));
  ReduceSpec spec{s.dtype, op, o.order, !(o.flags & TESSERA_COLLECTIVE_NONDETERMINISTIC)};
  size_t n = static_cast<size_t>(rn);
  return issue(*c, o.stream, concat("reduce_scatter of '", o.name, "'"), src->bytes,
               [c, in, out, bytes, outer, inner, p, spec, n](void* stream, const Deadline& dl) -> tessera_status {
                 void* staging = nullptr;
                 TESSERA_TRY(c->ops->allocTemp(&staging, bytes * p, stream));
                 tessera_status st = TESSERA_SUCCESS;
                 for (int k = 0; k < p && st == TESSERA_SUCCESS; ++k)
                   st = c->ops->copy2D(static_cast<char*>(staging) + k * bytes, inner, in + k * inner, inner * p, inner,
                                       outer, stream);
                 if (st == TESSERA_SUCCESS) st = reduceScatter(*c, staging, out, n, spec, stream, dl);
                 c->ops->freeTemp(staging, stream);
                 return st;
               });
}

tessera_status tessera_dtensor_all_reduce(tessera_dtensor t, const char* axis, int32_t op,
                                          const tessera_collective_options* opts) {
  const char* fn = "tessera_dtensor_all_reduce";
  TESSERA_TRY(checkDTensor(fn, t));
  int a = 0;
  TESSERA_TRY(findAxis(fn, t->mesh, axis, a));
  for (int32_t d = 0; d < t->rank; ++d)
    if (t->axisOf[d] == a)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": '", t->name, "' is partitioned over '", axis,
                  "' along dimension ", d, ": its ranks hold different parts, which an all_reduce would add");
  tessera_collective_options o = opts ? *opts : tessera_collective_options{};
  if (!o.name) o.name = t->name.c_str();
  tessera_tensor v = t->view();
  return tessera_all_reduce(t->mesh->axisComms[a], &v, &v, op, &o);
}

}  // extern "C"

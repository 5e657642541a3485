/* tessera/std_views.h: views for the standard library's row kernels (part of tessera/std.h).
 * The row kernels of stdlib.nn and stdlib.reduce work along the last axis of a rank-2 view
 * [rows, n]. tessera_std_rows_view makes that view of a tensor of any rank for any axis: the
 * axis moves last and the other dimensions merge into rows, which needs their strides to nest
 * (each equal to the next one's stride times its size, as in a contiguous tensor, permuted or
 * not). The data is not moved. */
#pragma once

#include <tessera/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *out = t viewed as [product of the other extents, extent of axis] (axis < 0 counts from the
 * end). TESSERA_ERROR_INVALID_ARGUMENT when the axis is out of range or the other dimensions
 * do not merge into one (tessera_last_error_message() is not set: the return value says it). */
static inline tessera_status tessera_std_rows_view(const tessera_tensor* t, int axis, tessera_tensor* out) {
  int r = t->rank;
  int a = axis < 0 ? axis + r : axis;
  if (r < 1 || a < 0 || a >= r) return TESSERA_ERROR_INVALID_ARGUMENT;
  int64_t rows = 1, rowStride = 0;
  int have = 0;
  /* Innermost other dimension first: each must nest inside the next inner one. */
  for (int d = r - 1; d >= 0; --d) {
    if (d == a || t->shape[d] == 1) continue;
    if (have && t->strides[d] != rowStride * rows) return TESSERA_ERROR_INVALID_ARGUMENT;
    if (!have) rowStride = t->strides[d];
    rows *= t->shape[d];
    have = 1;
  }
  *out = *t;
  out->rank = 2;
  for (int d = 2; d < TESSERA_MAX_RANK; ++d) out->shape[d] = 0, out->strides[d] = 0;
  out->shape[0] = rows;
  out->strides[0] = have ? rowStride : t->shape[a] * t->strides[a];
  out->shape[1] = t->shape[a];
  out->strides[1] = t->strides[a];
  return TESSERA_SUCCESS;
}

#ifdef __cplusplus
}
#endif

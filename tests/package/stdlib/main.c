/* A C program on the standard library (tessera/std.h, Tessera::std) and a user module that
 * imports it (noise.h). Checks, on fresh inputs: the user kernel's noise is bit for bit the
 * library's randn_f32 (same generator, one compiled in the user's module, one in
 * libtessera_std); tessera_std_reduce_sum_f32 of each row is within the f32 bound of a double
 * sum; argmax finds a planted maximum. Prints "ok" and returns 0 only when all hold. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessera/std.h>

#include "noise.h"

#define R 37
#define N 1001

static int fail(const char* what) {
  printf("FAIL: %s: %s\n", what, tessera_last_error_message());
  return 1;
}

int main(void) {
  const int64_t n = (int64_t)R * N, shape[2] = {R, N}, rows = R;
  static float zeros[R * N], mine[R * N], lib[R * N], sums[R];
  static int64_t where[R];
  void *dx, *dy, *dz, *ds, *da;
  if (tessera_malloc(&dx, n * 4) || tessera_malloc(&dy, n * 4) || tessera_malloc(&dz, n * 4) ||
      tessera_malloc(&ds, R * 4) || tessera_malloc(&da, R * 8) || tessera_memcpy(dx, zeros, n * 4))
    return fail("allocate");
  tessera_tensor tx, ty, tz, tm, ts, ta;
  tessera_tensor_init(&tx, dx, TESSERA_F32, 1, &n, 0);
  tessera_tensor_init(&ty, dy, TESSERA_F32, 1, &n, 0);
  tessera_tensor_init(&tz, dz, TESSERA_F32, 1, &n, 0);
  uint64_t seed = (uint64_t)time(NULL) * 2654435761u + 17;
  printf("seed %llu\n", (unsigned long long)seed);
  if (noise_add_noise(NULL, &tx, &ty, seed) || tessera_std_random_randn_f32(NULL, &tz, seed, 0) ||
      tessera_synchronize() || tessera_memcpy(mine, dy, n * 4) || tessera_memcpy(lib, dz, n * 4))
    return fail("noise");
  if (memcmp(mine, lib, sizeof mine) != 0) {
    printf("FAIL: the user module's randn_at differs from libtessera_std's randn_f32\n");
    return 1;
  }
  /* Row sums and argmax of the noise viewed as [R, N], with a planted maximum per row. */
  for (int r = 0; r < R; ++r) lib[r * N + (r * 97) % N] = 100.0f + r;
  tessera_tensor_init(&tm, dz, TESSERA_F32, 2, shape, 0);
  tessera_tensor_init(&ts, ds, TESSERA_F32, 1, &rows, 0);
  tessera_tensor_init(&ta, da, TESSERA_I64, 1, &rows, 0);
  if (tessera_memcpy(dz, lib, n * 4) || tessera_std_reduce_sum_f32(NULL, &tm, &ts) ||
      tessera_std_reduce_argmax_f32(NULL, &tm, &ta) || tessera_synchronize() ||
      tessera_memcpy(sums, ds, R * 4) || tessera_memcpy(where, da, R * 8))
    return fail("reduce");
  for (int r = 0; r < R; ++r) {
    double want = 0, mag = 0;
    for (int j = 0; j < N; ++j) want += lib[r * N + j], mag += fabs(lib[r * N + j]);
    /* f32 accumulation of N terms in any fixed order: |error| <= N * 2^-24 * sum |x|. */
    if (fabs(sums[r] - want) > N * 0x1p-24 * mag) {
      printf("FAIL: row %d sums to %.9g, expected %.9g\n", r, sums[r], want);
      return 1;
    }
    if (where[r] != (r * 97) % N) {
      printf("FAIL: argmax of row %d is %lld, expected %d\n", r, (long long)where[r], (r * 97) % N);
      return 1;
    }
  }
  printf("ok: %d x %d, the user module and libtessera_std agree\n", R, N);
  return 0;
}

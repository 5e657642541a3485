// tensorMapShape: which views a GPU variant may read through TMA, and what the encoder gets.
// Pure host code (no driver), so it runs everywhere.
#include <doctest/doctest.h>

#include "runtime/TensorMap.h"

using namespace tessera::rt;

namespace {

tessera_kernel_tensor view(void* data, int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride = 1) {
  tessera_kernel_tensor t{};
  t.data = data;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = rowStride;
  t.strides[1] = colStride;
  return t;
}

alignas(16) unsigned char buffer[64];
const tessera_tensor_map_desc kA{0, {64, 128}, 128};

}  // namespace

TEST_CASE("tensor maps: a dense bf16 matrix with 16-byte rows gets one") {
  TensorMapShape s;
  std::string why;
  REQUIRE(tensorMapShape(view(buffer, 1000, 1024, 1024), TESSERA_BF16, kA, s, why));
  CHECK(s.dims[0] == 1024);
  CHECK(s.dims[1] == 1000);
  CHECK(s.rowStrideBytes == 2048);
  CHECK(s.elemBytes == 2);
  CHECK(s.box[0] == 64);
  CHECK(s.box[1] == 128);
  CHECK(s.swizzle == 128);
  // A padded row stride is fine as long as it stays a multiple of 16 bytes.
  REQUIRE(tensorMapShape(view(buffer, 7, 100, 104), TESSERA_BF16, kA, s, why));
  CHECK(s.rowStrideBytes == 208);
}

TEST_CASE("tensor maps: views TMA cannot read are refused with the reason") {
  TensorMapShape s;
  std::string why;
  CHECK_FALSE(tensorMapShape(view(buffer, 1000, 999, 999), TESSERA_BF16, kA, s, why));
  CHECK(why.find("multiple of 16 bytes") != std::string::npos);
  CHECK_FALSE(tensorMapShape(view(buffer + 2, 64, 64, 64), TESSERA_BF16, kA, s, why));
  CHECK(why.find("16-byte aligned") != std::string::npos);
  CHECK_FALSE(tensorMapShape(view(buffer, 64, 64, 1, 64), TESSERA_BF16, kA, s, why));  // a transposed view
  CHECK(why.find("not contiguous") != std::string::npos);
  CHECK_FALSE(tensorMapShape(view(buffer, 0, 64, 64), TESSERA_BF16, kA, s, why));
  CHECK_FALSE(tensorMapShape(view(buffer, int64_t(1) << 31, 64, 64), TESSERA_BF16, kA, s, why));
  CHECK(why.find("2^31") != std::string::npos);
  CHECK_FALSE(tensorMapShape(view(buffer, 64, 64, 64), TESSERA_F4_E2M1, kA, s, why));
  // A box wider than the swizzle span is not a TMA box.
  CHECK_FALSE(tensorMapShape(view(buffer, 64, 128, 128), TESSERA_BF16, {0, {128, 64}, 128}, s, why));
  CHECK(why.find("box") != std::string::npos);
}

TEST_CASE("tensor maps: a rank-4 [B, H, S, D] view gets a map over all four dimensions") {
  TensorMapShape s;
  std::string why;
  tessera_kernel_tensor t{};
  t.data = buffer;
  const int64_t shape[4] = {2, 3, 77, 128};
  for (int i = 0; i < 4; ++i) t.shape[i] = shape[i];
  t.strides[3] = 1, t.strides[2] = 128, t.strides[1] = 77 * 128, t.strides[0] = 3 * 77 * 128;
  const tessera_tensor_map_desc q{0, {64, 128}, 128 | (128u << 16)};
  REQUIRE(tensorMapShape(t, TESSERA_BF16, q, s, why, 4));
  CHECK(s.rank == 4);
  CHECK(s.dims[0] == 128);
  CHECK(s.dims[1] == 77);
  CHECK(s.dims[2] == 3);
  CHECK(s.dims[3] == 2);
  CHECK(s.rowStrideBytes == 256);
  CHECK(s.outerStrideBytes[0] == 77 * 256);
  CHECK(s.outerStrideBytes[1] == 3 * 77 * 256);
  CHECK(s.swizzle == 128);
  // A form specialised for another head dimension gets no map, and says why.
  CHECK_FALSE(tensorMapShape(t, TESSERA_BF16, {0, {64, 128}, 128 | (64u << 16)}, s, why, 4));
  CHECK(why.find("specialised for 64") != std::string::npos);
  // An outer stride that is not a multiple of 16 bytes is refused.
  t.strides[1] = 77 * 128 + 1;
  CHECK_FALSE(tensorMapShape(t, TESSERA_BF16, q, s, why, 4));
  CHECK(why.find("dimension 1") != std::string::npos);
}

// safetensors headers whose shapes overflow 64 bits behind a zero size: zero bytes of data, but
// strides past 2^63, which the reader must refuse by name rather than build a tensor from.
#include <cstring>

#include "framework/train/io/safetensors.h"
#include "test_util.h"

using namespace ember;

namespace {
std::vector<uint8_t> file_with_header(std::string header) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> out(8 + header.size());
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(uint64_t(header.size()) >> (8 * i));
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}
}  // namespace

TEST(SafetensorsLimits, ZeroSizedShapesWithOverflowingStridesAreRefused) {
  auto bytes = file_with_header(R"({"a": {"dtype": "F32", "shape": [0, 4294967296, 4294967296], "data_offsets": [0, 0]}})");
  EXPECT_EMBER_ERROR(io::parse_safetensors(bytes, "f"), "f: tensor 'a': shape [0, 4294967296, 4294967296] is too large");
  // The same zero-sized tensor with strides that fit is an ordinary empty tensor.
  bytes = file_with_header(R"({"a": {"dtype": "F32", "shape": [0, 65536, 65536], "data_offsets": [0, 0]}})");
  EXPECT_EQ(io::parse_safetensors(bytes, "f").tensors.at(0).second.shape(), (Shape{0, 65536, 65536}));
}

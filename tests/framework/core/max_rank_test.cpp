// The rank cap (framework/core/max_rank.h): 64 dimensions, NumPy's limit, at every place a shape
// becomes a tensor: creation, views that add dimensions, and the file readers.
#include <cstring>

#include "framework/core/max_rank.h"
#include "framework/train/io/npy.h"
#include "framework/train/io/safetensors.h"
#include "test_util.h"

using namespace ember;

namespace {
std::string npy_bytes(size_t rank) {
  std::string dims;
  for (size_t i = 0; i < rank; ++i) dims += "1,";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }\n";
  std::string out = std::string("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) out += char((header.size() >> (8 * i)) & 0xFF);
  return out + header + std::string(4, '\0');
}

std::vector<uint8_t> safetensors_bytes(size_t rank) {
  std::string dims;
  for (size_t i = 0; i < rank; ++i) dims += i ? ",1" : "1";
  std::string header = R"({"a": {"dtype": "F32", "shape": [)" + dims + R"(], "data_offsets": [0, 4]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> out(8 + header.size() + 4, 0);
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(uint64_t(header.size()) >> (8 * i));
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}
}  // namespace

TEST(MaxRank, CreationRefusesMoreThanSixtyFourDimensions) {
  EXPECT_EQ(empty(Shape(64, 1)).dim(), 64);
  EXPECT_EMBER_ERROR(empty(Shape(65, 1)), "65 dimensions is too many (at most 64");
  EXPECT_EMBER_ERROR(zeros(Shape(1000, 1)), "1000 dimensions");
  EXPECT_EMBER_ERROR(from_vector(std::vector<float>{1.5f}, Shape(65, 1)), "at most 64");
}

TEST(MaxRank, ViewsThatAddADimensionPastTheCapAreRefused) {
  Tensor t = randn(Shape(64, 1));
  EXPECT_EMBER_ERROR(t.unsqueeze(0), "at most 64");
  EXPECT_EMBER_ERROR(t.reshape(Shape(65, 1)), "at most 64");
  EXPECT_EMBER_ERROR(t.expand(Shape(65, 1)), "at most 64");
  EXPECT_EQ(t.reshape(Shape(63, 1)).dim(), 63);  // fewer is fine
}

TEST(MaxRank, NpyReaderRefusesManyDimensions) {
  EXPECT_EQ(parse_npy(npy_bytes(64), "f").dim(), 64);
  EXPECT_EMBER_ERROR(parse_npy(npy_bytes(65), "f"), "65 dimensions is too many (at most 64");
  EXPECT_EMBER_ERROR(parse_npy(npy_bytes(50000), "f"), "50000 dimensions");
}

TEST(MaxRank, SafetensorsReaderRefusesManyDimensions) {
  EXPECT_EQ(io::parse_safetensors(safetensors_bytes(64), "f").tensors.at(0).second.dim(), 64);
  EXPECT_EMBER_ERROR(io::parse_safetensors(safetensors_bytes(65), "f"), "f: tensor 'a': a shape of 65 dimensions");
  EXPECT_EMBER_ERROR(io::parse_safetensors(safetensors_bytes(1000), "f"), "1000 dimensions is too many");
}

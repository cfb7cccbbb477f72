// The 16-bit float dtypes in files: safetensors F16 and BF16 written and read back bit for bit
// (dtype kept), the bytes as the format defines them, and .npy '<f2' both ways; NumPy has no
// bfloat16, so saving one to .npy is an error that says what to do.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "framework/train/io/npy.h"
#include "framework/train/io/safetensors.h"
#include "test_util.h"

using namespace ember;
using ember::testing::random;

namespace {

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/ember_half_io_" + name; }

std::vector<uint16_t> bits_of(const Tensor& t) {
  std::vector<uint16_t> out;
  if (t.dtype() == DType::BFloat16)
    for (const bfloat16& b : t.to_vector<bfloat16>()) out.push_back(b.bits);
  else
    for (const float16& h : t.to_vector<float16>()) out.push_back(h.bits);
  return out;
}

TEST(HalfSafetensors, WritesAndReadsF16AndBF16BitForBit) {
  Tensor b = (random({5, 3}, 1) * 100).to(DType::BFloat16), h = (random({4}, 2) * 1e-3).to(DType::Float16);
  Tensor bt = b.t();  // a strided view is written in row-major order
  NamedTensors in = {{"b", bt}, {"h", h}, {"f", random({2}, 3).to(DType::Float32)}};
  std::string path = temp_path("st.safetensors");
  io::save_safetensors(path, in);
  std::vector<io::TensorInfo> hdr = io::read_safetensors_header(path);
  ASSERT_EQ(hdr.size(), 3u);
  EXPECT_EQ(hdr[0].dtype, "BF16");
  EXPECT_EQ(hdr[0].shape, (Shape{3, 5}));
  EXPECT_EQ(hdr[1].dtype, "F16");
  io::Safetensors back = io::load_safetensors(path);
  ASSERT_EQ(back.tensors.size(), 3u);
  EXPECT_EQ(back.tensors[0].second.dtype(), DType::BFloat16);
  EXPECT_EQ(back.tensors[1].second.dtype(), DType::Float16);
  EXPECT_EQ(bits_of(back.tensors[0].second), bits_of(bt));
  EXPECT_EQ(bits_of(back.tensors[1].second), bits_of(h));
  // The same through the in-memory reader.
  io::Safetensors mem = io::parse_safetensors(io::serialize_safetensors(in));
  EXPECT_EQ(bits_of(mem.tensors[0].second), bits_of(bt));
  std::remove(path.c_str());
}

TEST(HalfSafetensors, StoresLittleEndianTwoByteValues) {
  std::vector<uint8_t> bytes = io::serialize_safetensors(
      {{"x", from_vector(std::vector<double>{1.0, -2.0}).to(DType::Float16)},
       {"y", from_vector(std::vector<double>{1.0, -0.5}).to(DType::BFloat16)}});
  ASSERT_GE(bytes.size(), 8u + 8u);
  const uint8_t* data = bytes.data() + bytes.size() - 8;  // the last 8 bytes: x then y
  const uint8_t want[8] = {0x00, 0x3c, 0x00, 0xc0, 0x80, 0x3f, 0x00, 0xbf};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(data[i], want[i]) << "byte " << i;
}

TEST(HalfNpy, Float16RoundTripsAsF2AndBFloat16IsRefused) {
  Tensor h = (random({3, 4}, 4) * 10).to(DType::Float16).t();
  std::string path = temp_path("h.npy");
  save_npy(path, h);
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find("'descr': '<f2'"), std::string::npos);
  Tensor back = load_npy(path);
  EXPECT_EQ(back.dtype(), DType::Float16);
  EXPECT_EQ(back.shape(), (Shape{4, 3}));
  EXPECT_EQ(bits_of(back), bits_of(h));
  std::remove(path.c_str());
  EXPECT_EMBER_ERROR(save_npy(temp_path("b.npy"), ones({2}, DType::BFloat16)), "save_npy: NumPy has no bfloat16 dtype");
  EXPECT_FALSE(std::ifstream(temp_path("b.npy")).good()) << "a refused save must not leave a file";
}

TEST(HalfNpy, ReadsAHandWrittenF2File) {
  std::string dict = "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }";
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += char(dict.size() & 0xff);
  file += char(dict.size() >> 8);
  file += dict;
  const uint16_t vals[3] = {0x3c00, 0x0001, 0xfbff};  // 1, 2^-24, -65504
  file.append(reinterpret_cast<const char*>(vals), 6);
  Tensor t = parse_npy(file);
  EXPECT_EQ(t.dtype(), DType::Float16);
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1.0, 0x1p-24, -65504.0}));
}

}  // namespace

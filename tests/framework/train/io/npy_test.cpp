#include "framework/train/io/npy.h"

#include <cstdio>
#include <fstream>

#include "test_util.h"

using namespace ember;

TEST(Npy, RoundTripsEveryDtypeAndLayout) {
  std::string path = ::testing::TempDir() + "/ember_npy_test.npy";
  Tensor a = ember::testing::random({3, 5}, 11);
  save_npy(path, a.t());  // a transposed view is written C-ordered
  EXPECT_TRUE(ember::testing::all_close(load_npy(path), a.t().contiguous(), 0, 0));
  Tensor f = randn({7}, DType::Float32);
  save_npy(path, f);
  EXPECT_TRUE(ember::testing::all_close(load_npy(path), f, 0, 0));
  Tensor i = randint({2, 2, 2}, -5, 5);
  save_npy(path, i);
  EXPECT_EQ(load_npy(path).to_vector<int64_t>(), i.to_vector<int64_t>());
  Tensor m = from_vector(std::vector<bool>{true, false, true, true, false, false}, {2, 3});
  save_npy(path, m.t());
  Tensor back = load_npy(path);
  EXPECT_EQ(back.dtype(), DType::Bool);
  EXPECT_EQ(back.shape(), (Shape{3, 2}));
  EXPECT_EQ(back.to_vector<bool>(), m.t().contiguous().to_vector<bool>());
  std::remove(path.c_str());
}

TEST(Npy, BoolIsPipeB1AndAnyNonzeroByteIsTrue) {
  std::string path = ::testing::TempDir() + "/ember_npy_bool.npy";
  save_npy(path, from_vector(std::vector<bool>{true, false, true}));
  std::string bytes;
  {
    std::ifstream f(path, std::ios::binary);
    bytes.assign((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
  EXPECT_NE(bytes.find("'descr': '|b1'"), std::string::npos);
  bytes[bytes.size() - 1] = char(9);  // NumPy writes 1, but any nonzero byte means true
  Tensor t = parse_npy(bytes, path);
  EXPECT_EQ(t.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(static_cast<const uint8_t*>(t.raw_data())[2], 1);
  std::remove(path.c_str());
}

TEST(Npy, HeaderIsPaddedAndReadableByNumpy) {
  std::string path = ::testing::TempDir() + "/ember_npy_header.npy";
  save_npy(path, ones({2, 3}));
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t hlen = size_t(static_cast<unsigned char>(bytes[8])) | (size_t(static_cast<unsigned char>(bytes[9])) << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_NE(bytes.find("'shape': (2,3)"), std::string::npos);
  EXPECT_EQ(bytes.size(), 10 + hlen + 6 * 4);
  std::remove(path.c_str());
}

TEST(Npy, TruncatedAndCorruptFilesRaise) {
  std::string path = ::testing::TempDir() + "/ember_npy_bad.npy";
  save_npy(path, ones({4, 4}));
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (size_t cut : {size_t(3), size_t(12), bytes.size() - 1}) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(cut));
    EXPECT_THROW(load_npy(path), Error) << "cut at " << cut;
  }
  std::string bad = bytes;
  bad[0] = 'X';
  std::ofstream(path, std::ios::binary) << bad;
  EXPECT_EMBER_ERROR(load_npy(path), "not a .npy file");
  EXPECT_EMBER_ERROR(load_npy("/nonexistent/x.npy"), "cannot open");
  std::remove(path.c_str());
}

// A header whose shape multiplies past 2^64 must not pass for the few data bytes that follow it.
TEST(Npy, ShapesThatOverflowOrAreNegativeAreRefused) {
  std::string path = ::testing::TempDir() + "/ember_npy_hostile.npy";
  auto write = [&](const std::string& shape, size_t data_bytes) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += char(header.size() & 0xFF);
    bytes += char(header.size() >> 8);
    bytes += header + std::string(data_bytes, '\0');
    std::ofstream(path, std::ios::binary) << bytes;
  };
  write("(274177, 67280421310721)", 4);  // 2^64 + 1 elements: wraps to 1 element of 4 bytes unchecked
  EXPECT_EMBER_ERROR(load_npy(path), "too large to hold");
  write("(4611686018427387904,)", 4);  // 2^62 elements fit int64, their 2^64 bytes do not
  EXPECT_EMBER_ERROR(load_npy(path), "bytes overflow 64 bits");
  write("(99999999999999999999,)", 4);
  EXPECT_EMBER_ERROR(load_npy(path), "bad shape entry '99999999999999999999'");
  write("(-1,)", 4);
  EXPECT_EMBER_ERROR(load_npy(path), "bad shape entry '-1'");
  write("(3,)", 4);
  EXPECT_EMBER_ERROR(load_npy(path), "header promises 12");
  // Found by tests/fuzz/fuzz_npy: an entry of whitespace other than spaces threw std::out_of_range.
  write("(1,\n)", 4);
  EXPECT_EQ(load_npy(path).shape(), (Shape{1}));
  write("(1, \t, 2)", 8);
  EXPECT_EQ(load_npy(path).shape(), (Shape{1, 2}));
  write("(1,)", 4);  // the well-formed neighbour still loads
  EXPECT_EQ(load_npy(path).shape(), (Shape{1}));
  std::remove(path.c_str());
}

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
  write("(1, \t, 2)", 8);  // an empty entry is no Python tuple
  EXPECT_EMBER_ERROR(load_npy(path), "bad shape entry ''");
  write("(1,)", 4);  // the well-formed neighbour still loads
  EXPECT_EQ(load_npy(path).shape(), (Shape{1}));
  std::remove(path.c_str());
}

namespace {
std::string npy_with_header(const std::string& dict, size_t data_bytes) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += char(header.size() & 0xFF);
  bytes += char(header.size() >> 8);
  return bytes + header + std::string(data_bytes, '\x01');
}
}  // namespace

// The header is a Python dict literal with exactly three keys, parsed by a grammar: a substring
// search took the first '<f8' it found, so a second 'descr' key turned big-endian data into garbage.
TEST(Npy, HeaderIsParsedAsADictWithExactlyTheThreeKeys) {
  const std::string ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_EQ(parse_npy(npy_with_header(ok, 16), "f").shape(), (Shape{2}));
  EXPECT_EQ(parse_npy(npy_with_header("{\"shape\": (), \"descr\": \"<i8\", \"fortran_order\": False}", 8), "f").dtype(),
            DType::Int64);
  struct Bad {
    std::string dict, needle;
  };
  for (const Bad& b : std::vector<Bad>{
           {"{'descr': '>f8', 'fortran_order': False, 'shape': (2,), 'descr': '<f8'}", "repeats the key 'descr'"},
           {"{'descr': '>f8', 'fortran_order': False, 'shape': (2,), 'x': '<f8'}", "unknown key 'x'"},
           {"{'descr': '>f8', 'fortran_order': False, 'shape': (2,)}", "unsupported dtype '>f8'"},
           {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'shape': (2,)}", "repeats the key 'shape'"},
           {"{'descr': '<f8', 'fortran_order': False, 'fortran_order': False, 'shape': (2,)}", "repeats the key 'fortran_order'"},
           {"{'descr': '<f8', 'shape': (2,)}", "lacks the key 'fortran_order'"},
           {"{'descr': '<f8', 'fortran_order': True, 'shape': (2,)}", "Fortran-ordered"},
           {"{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}", "needs True or False"},
           {"{'descr': '<f8', 'fortran_order': False, 'shape': (2)}", "not a tuple (expected (2,))"},
           {"{'descr': '<f8', 'fortran_order': False, 'shape': [2]}", "expected a tuple after 'shape'"},
           {"{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}", "needs ',' or '}'"},
           {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", "bytes after its dict"},
           {"'descr': '<f8', 'fortran_order': False, 'shape': (2,)", "expected the header to start with '{'"},
           {"{'descr': '<f\\x38', 'fortran_order': False, 'shape': (2,)}", "escape"},
           {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,", "unterminated shape"},
       }) {
    SCOPED_TRACE(b.dict);
    EXPECT_EMBER_ERROR(parse_npy(npy_with_header(b.dict, 16), "f"), b.needle);
  }
}

// The magic comes first: a device that never ends (/dev/zero) is refused after a few bytes
// instead of being read until memory runs out.
TEST(Npy, EndlessAndNonNpyStreamsAreRefusedAfterTheMagic) {
  EXPECT_EMBER_ERROR(load_npy("/dev/zero"), "is not a .npy file");
  EXPECT_EMBER_ERROR(load_npy("/dev/null"), "is not a .npy file");
  // A valid file with bytes beyond what its header promises is refused, not silently cut.
  const std::string path = ::testing::TempDir() + "/ember_npy_long.npy";
  std::ofstream(path, std::ios::binary) << npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 9);
  EXPECT_EMBER_ERROR(load_npy(path), "holds 9 data bytes, its header promises 8");
  std::remove(path.c_str());
}

// Version 2.0 and 3.0 files (a 4-byte header length) load like version 1.0.
TEST(Npy, VersionTwoAndThreeFilesLoad) {
  const std::string path = ::testing::TempDir() + "/ember_npy_v2.npy";
  Tensor t = randn({3, 2}, DType::Float64);
  save_npy(path, t);
  std::ifstream f(path, std::ios::binary);
  std::string v1((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  f.close();
  const size_t hlen = size_t(uint8_t(v1[8])) | size_t(uint8_t(v1[9])) << 8;
  for (char version : {char(2), char(3)}) {
    std::string v2 = v1.substr(0, 6) + version + '\0' + char(hlen & 0xFF) + char(hlen >> 8) + std::string(2, '\0') + v1.substr(10);
    std::ofstream(path, std::ios::binary) << v2;
    EXPECT_TRUE(ember::testing::all_close(load_npy(path), t, 0, 0)) << int(version);
    EXPECT_TRUE(ember::testing::all_close(parse_npy(v2, "b"), t, 0, 0));
    EXPECT_EMBER_ERROR(parse_npy(v2.substr(0, 11), "b"), "truncated inside its preamble");
  }
  std::string v4 = v1;
  v4[6] = 4;
  EXPECT_EMBER_ERROR(parse_npy(v4, "b"), "version 4.0");
  std::remove(path.c_str());
}

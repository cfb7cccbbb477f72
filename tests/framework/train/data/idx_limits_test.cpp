// IDX files from outside: headers whose sizes overflow, and gzip bombs (a small file inflating to
// far more than its header declares) end in ember::Error, with memory bounded by the header.
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <string>
#include <vector>

#include "framework/train/data/idx.h"
#include "test_util.h"

using namespace ember;

namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/ember_idx_limits_" + std::to_string(::getpid()) + "_" + name;
}

// A ubyte IDX header for `dims`, big-endian.
std::vector<uint8_t> header(const std::vector<uint32_t>& dims) {
  std::vector<uint8_t> h = {0, 0, 0x08, uint8_t(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) h.push_back(uint8_t(d >> s));
  return h;
}

// Gzips `head` followed by `zeros` zero bytes (which compress about 1000:1).
void write_gzip(const std::string& path, const std::vector<uint8_t>& head, size_t zeros) {
  gzFile f = gzopen(path.c_str(), "wb9");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, head.data(), unsigned(head.size())), int(head.size()));
  std::vector<uint8_t> chunk(1 << 20, 0);
  for (size_t left = zeros; left > 0;) {
    unsigned n = unsigned(std::min(left, chunk.size()));
    ASSERT_EQ(gzwrite(f, chunk.data(), n), int(n));
    left -= n;
  }
  ASSERT_EQ(gzclose(f), Z_OK);
}

}  // namespace

TEST(IdxLimits, ZeroItemsWithAnOverflowingItemSizeAreRefusedAtParse) {
  // (0, 2^32-1, 2^32-1): zero elements, but each item would be 2^64 pixels.
  EXPECT_EMBER_ERROR(data::parse_idx(header({0, 0xFFFFFFFFu, 0xFFFFFFFFu}), "t"), "per-item size overflows 64 bits");
  EXPECT_EMBER_ERROR(data::parse_idx(header({0, 0xFFFFFFFFu, 0xFFFFFFFFu}), "t"), "[0, 4294967295, 4294967295]");
  // Zero items of an ordinary size are a valid, empty file.
  data::IdxArray a = data::parse_idx(header({0, 28, 28}), "t");
  EXPECT_EQ(a.numel(), 0);
  EXPECT_EQ(a.to_float().shape(), (Shape{0, 28, 28}));
}

TEST(IdxLimits, GzipBombStopsAtTheSizeTheHeaderDeclares) {
  const std::string path = temp_path("bomb.gz");
  // The header admits to 2x28x28 = 1568 bytes; the stream inflates to 32 MiB more.
  write_gzip(path, header({2, 28, 28}), size_t(32) << 20);
  // The reader stops one byte past the declared size: the error reports 1569, not 32 MiB.
  EXPECT_EMBER_ERROR(data::read_idx(path), "(1568 data bytes) but the file has 1569 data bytes");
  std::remove(path.c_str());
}

TEST(IdxLimits, DeclaredSizesAboveTheLimitAreRefusedBeforeInflating) {
  const std::string path = temp_path("big.gz");
  write_gzip(path, header({2000, 28, 28}), 2000 * 28 * 28);
  EXPECT_EMBER_ERROR(data::read_idx(path, size_t(1) << 20), "more than the 1048576-byte limit");
  EXPECT_EQ(data::read_idx(path).numel(), 2000 * 28 * 28);  // within the default limit it loads
  // Dimensions whose product overflows 64 bits saturate and are refused the same way.
  write_gzip(path, header({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}), 16);
  EXPECT_EMBER_ERROR(data::read_idx(path), "-byte limit of this reader");
  std::remove(path.c_str());
}

TEST(IdxLimits, ShortAndCorruptStreamsStillNameTheProblem) {
  const std::string path = temp_path("short.gz");
  write_gzip(path, header({10, 28, 28}), 100);  // promises 7840 bytes, holds 100
  EXPECT_EMBER_ERROR(data::read_idx(path), "holds only 100 elements");
  write_gzip(path, {0, 0, 0x08}, 0);  // stops inside the 4-byte header
  EXPECT_EMBER_ERROR(data::read_idx(path), "too short for the 4-byte header");
  write_gzip(path, {0, 0, 0x08, 3, 0, 0}, 0);  // stops inside the dimension sizes
  EXPECT_EMBER_ERROR(data::read_idx(path), "too short for 3 dimension sizes");
  std::remove(path.c_str());
}

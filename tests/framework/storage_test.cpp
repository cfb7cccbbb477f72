// allocate_host: the alignment and the usable size it promises, small and huge-page sized.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "framework/storage.h"

using namespace ember;

namespace {
void fill_and_check(unsigned char* p, size_t bytes) {
  // Every byte asked for is usable: write a pattern over all of them and read it back.
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(i * 131 + 7);
  for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(p[i], static_cast<unsigned char>(i * 131 + 7)) << i;
  ASSERT_EQ(p[bytes - 1], static_cast<unsigned char>((bytes - 1) * 131 + 7));
}
}  // namespace

TEST(AllocateHost, SmallBlocksAre64ByteAligned) {
  for (size_t bytes : {size_t(1), size_t(63), size_t(64), size_t(1000), size_t(2 << 20) - 1}) {
    void* p = allocate_host(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    fill_and_check(static_cast<unsigned char*>(p), bytes);
    std::free(p);
  }
}

TEST(AllocateHost, FromTwoMebibytesOnBlocksStartOnAHugePage) {
  for (size_t bytes : {size_t(2) << 20, (size_t(2) << 20) + 1, size_t(5) << 20}) {
    void* p = allocate_host(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size_t(2) << 20), 0u) << bytes;
    fill_and_check(static_cast<unsigned char*>(p), bytes);
    std::free(p);
  }
}

TEST(AllocateHost, ZeroBytesStillGivesAFreeablePointer) {
  void* p = allocate_host(0);
  EXPECT_NE(p, nullptr);
  std::free(p);
}

TEST(AllocateHost, ASizeThatCannotBeRoundedUpIsRefusedNotWrapped) {
  // Rounding these up to whole 2 MiB pages would overflow size_t to a tiny block.
  EXPECT_EQ(allocate_host(std::numeric_limits<size_t>::max()), nullptr);
  EXPECT_EQ(allocate_host(std::numeric_limits<size_t>::max() - 100), nullptr);
}

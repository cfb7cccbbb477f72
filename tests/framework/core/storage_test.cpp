// allocate_host and free_host: the alignment and the usable size they promise, small and huge-page
// sized; on_huge_pages: which memory it knows to have asked for huge pages.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>
#include <limits>

#include "framework/core/storage.h"

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
    free_host(p);
  }
}

TEST(AllocateHost, FromTwoMebibytesOnBlocksStartOnAHugePage) {
  for (size_t bytes : {size_t(2) << 20, (size_t(2) << 20) + 1, size_t(5) << 20}) {
    void* p = allocate_host(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size_t(2) << 20), 0u) << bytes;
    fill_and_check(static_cast<unsigned char*>(p), bytes);
    free_host(p);
  }
}

TEST(AllocateHost, ZeroBytesStillGivesAFreeablePointer) {
  void* p = allocate_host(0);
  EXPECT_NE(p, nullptr);
  free_host(p);
}

TEST(AllocateHost, ASizeThatCannotBeRoundedUpIsRefusedNotWrapped) {
  // Rounding these up to whole 2 MiB pages would overflow size_t to a tiny block.
  EXPECT_EQ(allocate_host(std::numeric_limits<size_t>::max()), nullptr);
  EXPECT_EQ(allocate_host(std::numeric_limits<size_t>::max() - 100), nullptr);
}

TEST(FreeHost, NullIsANoOp) { free_host(nullptr); }

namespace {
// Whether this machine's Linux honours MADV_HUGEPAGE: THP built in and not "never".
bool thp_on() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  return std::getline(f, line) && line.find("[never]") == std::string::npos;
}
const void* shifted(const void* p, intptr_t bytes) {
  return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + uintptr_t(bytes));
}
}  // namespace

TEST(OnHugePages, KnowsTheWholeOfEachHugeBlockAndNothingAroundIt) {
  const size_t bytes = (size_t(5) << 20) + 100, whole = size_t(6) << 20;  // rounded up to 6 MiB
  void* p = allocate_host(bytes);
  ASSERT_NE(p, nullptr);
  const bool on = thp_on();
  EXPECT_EQ(on_huge_pages(p, bytes), on);
  EXPECT_EQ(on_huge_pages(shifted(p, 4096), 1000), on);
  EXPECT_EQ(on_huge_pages(p, whole), on);
  EXPECT_EQ(on_huge_pages(shifted(p, intptr_t(whole) - 1), 1), on);
  EXPECT_FALSE(on_huge_pages(p, whole + 1));          // one byte past the block
  EXPECT_FALSE(on_huge_pages(shifted(p, -1), 2));     // one byte before it
  EXPECT_FALSE(on_huge_pages(p, std::numeric_limits<size_t>::max()));
  free_host(p);
  EXPECT_FALSE(on_huge_pages(p, 1000));  // forgotten once freed
}

TEST(OnHugePages, SmallBlocksAndForeignMemoryAreNotKnown) {
  void* small = allocate_host(1000);
  EXPECT_FALSE(on_huge_pages(small, 1000));
  free_host(small);
  std::vector<float> foreign(size_t(2) << 20);  // 8 MiB from malloc: a NumPy array's kind of memory
  EXPECT_FALSE(on_huge_pages(foreign.data(), foreign.size() * sizeof(float)));
  EXPECT_FALSE(on_huge_pages(nullptr, 10));
}

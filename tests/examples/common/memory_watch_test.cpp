// The soak test's memory judgement: RSS from /proc/self/status and growth past the warm-up maximum.
#include "examples/common/memory_watch.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "test_util.h"

using namespace ember;

namespace {
cli::MemorySample at(int64_t rss_mib, int64_t held_mib) {
  cli::MemorySample s;
  s.rss = rss_mib << 20;
  s.in_use = (held_mib << 20) / 2;
  s.cached = (held_mib << 20) - s.in_use;
  return s;
}
}  // namespace

TEST(MemoryWatch, ResidentBytesReadsVmRssAndSeesAnAllocationBeingTouched) {
  const int64_t before = cli::resident_bytes();
  ASSERT_GT(before, 0);
  // 64 MiB written page by page (a std::vector, outside Ember's allocator and its cache) must show up.
  std::vector<char> block(size_t(64) << 20, 1);
  EXPECT_GT(cli::resident_bytes(), before + (int64_t(48) << 20)) << int(block[12345]);

  const std::string path = "/tmp/ember_memory_watch_" + std::to_string(::getpid());
  std::ofstream(path) << "Name:\tx\nVmPeak:\t  999 kB\nVmRSS:\t  1234 kB\nVmData:\t 5 kB\n";
  EXPECT_EQ(cli::resident_bytes(path), 1234 * 1024);
  std::ofstream(path) << "Name:\tx\n";
  EXPECT_EQ(cli::resident_bytes(path), -1);
  std::remove(path.c_str());
}

TEST(MemoryWatch, SampleMemoryCountsTheAllocatorsBytes) {
  const cli::MemorySample before = cli::sample_memory(0);
  Tensor t = zeros({1 << 20}, DType::Float32);  // 4 MiB from the caching allocator
  const cli::MemorySample during = cli::sample_memory(1);
  EXPECT_GE(during.in_use - before.in_use, int64_t(4) << 20);
  EXPECT_GT(during.allocations, before.allocations);
  t = Tensor();
  // Freed into the cache: no longer in use, still held.
  const cli::MemorySample after = cli::sample_memory(2);
  EXPECT_LE(after.in_use, during.in_use - (int64_t(4) << 20));
  EXPECT_EQ(after.held(), during.held());
}

TEST(MemoryWatch, GrowthIsMeasuredFromTheWarmUpMaximum) {
  const cli::GrowthLimits limits{int64_t(16) << 20, int64_t(1) << 20};
  const std::vector<cli::MemorySample> warm = {at(100, 40), at(120, 50), at(110, 45)};
  EXPECT_EQ(cli::memory_growth(warm, at(136, 51), limits), "");  // exactly at both limits
  EXPECT_EQ(cli::memory_growth(warm, at(90, 30), limits), "");
  EXPECT_NE(cli::memory_growth(warm, at(137, 50), limits).find("RSS 137 MiB is 17 MiB above its warm-up maximum 120 MiB"),
            std::string::npos);
  const std::string held = cli::memory_growth(warm, at(120, 52), limits);
  EXPECT_NE(held.find("the allocator holds 52 MiB, 2 MiB above its warm-up maximum 50 MiB"), std::string::npos) << held;
  EXPECT_EQ(held.find("RSS"), std::string::npos);
  EXPECT_EMBER_ERROR(cli::memory_growth({}, at(1, 1), limits), "no warm-up samples");
}

// Memory of a long run, for soak tests: the process's resident set size (VmRSS in
// /proc/self/status) and the bytes Ember's CPU caching allocator holds (handed out + kept cached).
// A run is judged against the most it used during its warm-up: a leak grows past that, a steady
// run does not.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/core/storage.h"

namespace ember::cli {

// VmRSS in bytes; -1 where /proc/self/status cannot be read (not Linux).
inline int64_t resident_bytes(const std::string& status_path = "/proc/self/status") {
  std::ifstream f(status_path);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return int64_t(std::strtoll(line.c_str() + 6, nullptr, 10)) * 1024;  // "... kB"
  return -1;
}

struct MemorySample {
  double seconds = 0;
  int64_t rss = 0;     // resident bytes
  int64_t in_use = 0;  // allocator: handed out, not yet freed
  int64_t cached = 0;  // allocator: freed blocks kept for reuse
  int64_t allocations = 0;
  int64_t held() const { return in_use + cached; }
};

inline MemorySample sample_memory(double seconds) {
  const MemoryStats s = memory_stats(Device::CPU);
  return {seconds, resident_bytes(), s.current_bytes, s.cached_bytes, s.allocations};
}

struct GrowthLimits {
  int64_t rss = 0;   // bytes RSS may rise above its warm-up maximum (the C library's heap moves)
  int64_t held = 0;  // bytes the allocator's held bytes may rise above theirs
};

// Empty when `now` is within `limits` of the largest warm-up sample, else what grew and by how much.
inline std::string memory_growth(const std::vector<MemorySample>& warmup, const MemorySample& now,
                                 const GrowthLimits& limits) {
  EMBER_CHECK(!warmup.empty(), "memory_growth: no warm-up samples to compare with");
  int64_t rss = 0, held = 0;
  for (const MemorySample& s : warmup) rss = std::max(rss, s.rss), held = std::max(held, s.held());
  const double mib = 1024.0 * 1024.0;
  std::string out;
  if (now.rss - rss > limits.rss)
    out += str("RSS ", double(now.rss) / mib, " MiB is ", double(now.rss - rss) / mib, " MiB above its warm-up maximum ",
               double(rss) / mib, " MiB (allowed: ", double(limits.rss) / mib, " MiB)");
  if (now.held() - held > limits.held)
    out += str(out.empty() ? "" : "; ", "the allocator holds ", double(now.held()) / mib, " MiB, ",
               double(now.held() - held) / mib, " MiB above its warm-up maximum ", double(held) / mib,
               " MiB (allowed: ", double(limits.held) / mib, " MiB)");
  return out;
}

}  // namespace ember::cli

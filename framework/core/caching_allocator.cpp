#include "framework/core/caching_allocator.h"

#include <algorithm>

#include "framework/core/error.h"

namespace ember {

void CachingAllocator::count_allocation(size_t size) {
  ++stats_.allocations;
  stats_.current_bytes += int64_t(size);
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.current_bytes);
  high_water_ = std::max(high_water_, stats_.current_bytes);
}

void* CachingAllocator::allocate(size_t bytes) {
  const size_t size = round(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    stats_.cached_bytes -= int64_t(size);
    count_allocation(size);
    return p;
  }
  // A cache that would outgrow its cap with this block in use is emptied first.
  const int64_t in_use = stats_.current_bytes + int64_t(size);
  if (stats_.cached_bytes > 0 && stats_.cached_bytes + int64_t(size) > cache_cap(std::max(high_water_, in_use)))
    release_cached();
  void* p = obtain(size);
  if (!p && stats_.cached_bytes > 0) {  // give the cache back and try once more
    release_cached();
    p = obtain(size);
  }
  if (!p) throw Error(out_of_memory(size, stats_.current_bytes));
  count_allocation(size);
  return p;
}

void CachingAllocator::deallocate(void* p, size_t bytes) {
  const size_t size = round(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.current_bytes -= int64_t(size);
  // Very large blocks go back to the system: caching them would pin memory for one-off buffers.
  if (size > max_cached_block() || stats_.cached_bytes + int64_t(size) > cache_cap(high_water_)) {
    give_back(p);
    return;
  }
  free_[size].push_back(p);
  stats_.cached_bytes += int64_t(size);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_bytes = stats_.current_bytes;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_cached();
}

void CachingAllocator::release_all() { empty_cache(); }

void CachingAllocator::release_cached() {
  for (auto& kv : free_)
    for (void* p : kv.second) give_back(p);
  free_.clear();
  stats_.cached_bytes = 0;
}

}  // namespace ember

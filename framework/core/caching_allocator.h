// The bookkeeping that every device's caching allocator shares: freed blocks kept in exact-size
// bins and handed out again, the statistics of memory_stats(), and a cap on what the cache holds.
// A device says how sizes round, how a block is obtained from and returned to the system, and how
// large its cache may grow (framework/core/storage.cpp for the CPU, framework/cuda/allocator.cpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "framework/core/storage.h"

namespace ember {

// A cap that keeps every block of a steady loop and still bounds a growing one. A training step's
// forward and backward free and take blocks of different sizes, so the blocks it cycles through add
// up to more than its peak in use (1.16x at a 6-layer, 384-wide GPT's step); a cap at the peak
// itself gave blocks back and faulted fresh pages in every step (14% of that step). Twice the peak
// (at least `floor`) keeps them; a loop of ever-growing sizes stays within three times its peak.
inline int64_t loop_cache_cap(int64_t high_water, int64_t floor) { return std::max(2 * high_water, floor); }

class CachingAllocator : public Allocator {
 public:
  void* allocate(size_t bytes) final;
  void deallocate(void* p, size_t bytes) final;  // never throws: called from destructors
  MemoryStats stats() const final;
  void reset_peak() final;
  void empty_cache() final;

 protected:
  virtual size_t round(size_t bytes) const = 0;
  virtual void* obtain(size_t size) = 0;       // a new block from the system; nullptr when there is none
  virtual void give_back(void* p) noexcept = 0;  // returns a block obtained before
  // The message of the error when no block of `size` can be had while `in_use` bytes are in tensors.
  virtual std::string out_of_memory(size_t size, int64_t in_use) const = 0;
  // The most bytes the cache may hold, given the most bytes ever in use at once (counting the
  // request at hand); freeing a block larger than max_cached_block returns it to the system.
  virtual int64_t cache_cap(int64_t high_water) const { return std::numeric_limits<int64_t>::max(); }
  virtual size_t max_cached_block() const { return std::numeric_limits<size_t>::max(); }
  // A derived allocator's destructor calls this: give_back is gone once its own destructor ends.
  void release_all();

 private:
  void release_cached();  // mu_ held
  void count_allocation(size_t size);  // mu_ held; after the block is in hand, so that a failure leaves no trace

  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  MemoryStats stats_;
  int64_t high_water_ = 0;  // the most bytes ever in use at once (reset_peak does not lower it)
};

}  // namespace ember

#include "framework/core/storage.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "framework/core/caching_allocator.h"

namespace ember {

namespace {

// Whether Linux gives transparent huge pages to memory that asks for them: THP is built in and not
// set to "never" (read once; "always" and "madvise" both honour MADV_HUGEPAGE).
bool thp_honoured() {
  static const bool on = [] {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    return std::getline(f, line) && line.find("[never]") == std::string::npos;
  }();
  return on;
}

// The blocks of allocate_host that asked for huge pages and were granted the advice: start -> end.
// Never destroyed: the CPU allocator's own destructor, at exit, still frees blocks through here.
std::mutex& huge_mu() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::map<uintptr_t, uintptr_t>& huge_blocks() {
  static auto* blocks = new std::map<uintptr_t, uintptr_t>;
  return *blocks;
}

}  // namespace

// Blocks of 2 MiB or more start on a 2 MiB boundary and ask Linux for transparent huge pages
// (where THP is set to "madvise", nothing else gets them): kernels that stream large weights or
// packing buffers pay a TLB walk per 4 KiB page otherwise, and prefetchers stop at 4 KiB boundaries
// (measurements: the NOTES-log.md files under benchmarks/).
void* allocate_host(size_t bytes) {
  constexpr size_t kHugePage = size_t(2) << 20;
  if (bytes < kHugePage) return std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
  if (bytes > std::numeric_limits<size_t>::max() - kHugePage) return nullptr;  // no rounding up past the top
  const size_t whole = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, whole);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: where it is refused, 4 KiB pages serve, and on_huge_pages says no.
  if (p && madvise(p, whole, MADV_HUGEPAGE) == 0 && thp_honoured()) {
    std::lock_guard<std::mutex> lock(huge_mu());
    huge_blocks()[reinterpret_cast<uintptr_t>(p)] = reinterpret_cast<uintptr_t>(p) + whole;
  }
#endif
  return p;
}

void free_host(void* p) {
  if (!p) return;
  {
    std::lock_guard<std::mutex> lock(huge_mu());
    huge_blocks().erase(reinterpret_cast<uintptr_t>(p));
  }
  std::free(p);
}

bool on_huge_pages(const void* p, size_t bytes) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  if (!p || bytes > std::numeric_limits<uintptr_t>::max() - lo) return false;
  std::lock_guard<std::mutex> lock(huge_mu());
  const auto& blocks = huge_blocks();
  auto it = blocks.upper_bound(lo);  // the first block starting after p
  if (it == blocks.begin()) return false;
  --it;
  return lo + bytes <= it->second;
}

namespace cuda {
void ensure_backend();  // framework/core/cuda_loader.cpp: loads libember_cuda.so, which installs its allocator
}
namespace {

// Keeps freed blocks in size-keyed lists. Sizes are rounded up to 64 bytes so that
// near-equal requests share blocks, and every block is 64-byte aligned for SIMD loads.
// A block is reused only for a request of its exact size, so a program whose shapes keep growing
// (generation without a KV cache: every step a longer sequence) would cache every size it ever
// freed and grow without bound (24 GB before the kernel killed a 512-token run). So the cache
// holds at most twice what the program ever had in use at once (at least 256 MiB; loop_cache_cap):
// a steady training loop keeps all its blocks; a growing one flushes the stale sizes.
class CpuCachingAllocator : public CachingAllocator {
 public:
  ~CpuCachingAllocator() override { release_all(); }

 protected:
  size_t round(size_t b) const override { return b == 0 ? 64 : (b + 63) / 64 * 64; }
  // From 2 MiB on the block is rounded up to whole huge pages (allocate_host); the statistics
  // and the cache keep the requested size, so the rounding stays invisible to them.
  void* obtain(size_t size) override { return allocate_host(size); }
  void give_back(void* p) noexcept override { free_host(p); }
  std::string out_of_memory(size_t size, int64_t) const override {
    return str("out of memory: could not allocate ", size, " bytes on the CPU");
  }
  int64_t cache_cap(int64_t high_water) const override { return loop_cache_cap(high_water, int64_t(256) << 20); }
  size_t max_cached_block() const override { return size_t(1) << 30; }
};

Allocator* g_allocators[2] = {nullptr, nullptr};

}  // namespace

Device parse_device(const std::string& s) {
  if (s == "cpu") return Device::CPU;
  if (s == "cuda") return Device::CUDA;
  throw Error(str("unknown device '", s, "' (expected 'cpu' or 'cuda')"));
}

void set_allocator(Device d, Allocator* a) { g_allocators[int(d)] = a; }

Allocator& allocator(Device d) {
  if (d == Device::CPU) {
    static CpuCachingAllocator* cpu = new CpuCachingAllocator();  // never destroyed: tensors may outlive statics
    return *cpu;
  }
  // The CUDA backend is loaded and installs itself on the first CUDA tensor, so that programs
  // which never use the GPU never map a CUDA library. Throws when no GPU is usable.
  if (d == Device::CUDA && !g_allocators[int(d)]) cuda::ensure_backend();
  EMBER_CHECK(g_allocators[int(d)], "device ", d,
              " is not available: Ember was built without CUDA or no GPU was found");
  return *g_allocators[int(d)];
}

MemoryStats memory_stats(Device d) { return allocator(d).stats(); }
void reset_peak_memory(Device d) { allocator(d).reset_peak(); }

Storage::Storage(size_t bytes, Device device) : bytes_(bytes), device_(device) {
  data_ = allocator(device).allocate(bytes);
}
Storage::Storage(void* data, size_t bytes, Device device, std::shared_ptr<void> owner)
    : data_(data), bytes_(bytes), device_(device), owner_(std::move(owner)) {
  EMBER_CHECK(owner_, "Storage: foreign memory needs an owner that keeps it alive");
}
namespace {
std::atomic<uint64_t> g_write_clock{0};
}  // namespace

uint64_t write_clock() { return g_write_clock.load(std::memory_order_relaxed); }

void Storage::mark_written(const char* by) {
  version_ = g_write_clock.fetch_add(1, std::memory_order_relaxed) + 1;
  last_writer_ = by;
}

Storage::~Storage() {
  if (!owner_) allocator(device_).deallocate(data_, bytes_);
}

}  // namespace ember

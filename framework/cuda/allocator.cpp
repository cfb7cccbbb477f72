// The CUDA caching allocator and the host<->device copier, installed on first use of a CUDA tensor.
//
// cudaMalloc and cudaFree are slow (cudaFree synchronises the whole device), so freed blocks are
// kept in size bins and handed out again, as PyTorch's caching allocator does (much simplified:
// exact-size bins after rounding, no block splitting). All of Ember's kernels run on the legacy
// default stream, so a block freed by one op and reused by the next is ordered by the stream.
#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "framework/cuda/check.h"
#include "framework/core/cuda.h"
#include "framework/core/cuda_hooks.h"
#include "framework/core/device_copy.h"
#include "framework/core/storage.h"

namespace ember::cuda {
namespace {

class CudaCachingAllocator : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    size_t size = round(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    void* p = nullptr;
    if (it != free_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      stats_.cached_bytes -= int64_t(size);
    } else {
      p = device_malloc(size);
    }
    ++stats_.allocations;
    stats_.current_bytes += int64_t(size);
    stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.current_bytes);
    return p;
  }
  void deallocate(void* p, size_t bytes) override {  // never throws: called from destructors
    size_t size = round(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    stats_.current_bytes -= int64_t(size);
    free_[size].push_back(p);
    stats_.cached_bytes += int64_t(size);
  }
  MemoryStats stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  void reset_peak() override {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_bytes = stats_.current_bytes;
  }
  void empty_cache() override {
    std::lock_guard<std::mutex> lock(mu_);
    release_cached();
  }

  // Bin size: 512-byte steps up to 1 MiB, then steps of an eighth of the next power of two
  // (at most 12.5% waste), so that near-equal large requests share a bin.
  static size_t round(size_t b) {
    constexpr size_t kSmall = size_t(1) << 20;
    if (b <= kSmall) return b == 0 ? 512 : (b + 511) / 512 * 512;
    size_t p2 = kSmall;
    while (p2 < b) p2 <<= 1;
    size_t step = std::max(kSmall, p2 / 8);
    return (b + step - 1) / step * step;
  }

 private:
  void* device_malloc(size_t size) {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaErrorMemoryAllocation) {  // give the cache back and try once more
      cudaGetLastError();
      release_cached();
      e = cudaMalloc(&p, size);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw Error(str("out of memory on cuda: could not allocate ", size, " bytes (", cudaGetErrorString(e),
                      "); Ember holds ", stats_.current_bytes, " bytes in tensors"));
    }
    return p;
  }
  void release_cached() {
    for (auto& kv : free_)
      for (void* p : kv.second) cudaFree(p);
    free_.clear();
    stats_.cached_bytes = 0;
  }

  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  MemoryStats stats_;
};

void copy(void* dst, Device dd, const void* src, Device sd, size_t bytes) {
  if (bytes == 0) return;
  // Unified addressing tells the runtime which side each pointer lives on. cudaMemcpy on the
  // legacy default stream waits for the kernels that produced `src`.
  EMBER_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
}

// Installed by the core's ensure_backend() (framework/core/cuda_loader.cpp), once, on the first CUDA tensor.
void install() {
  static CudaCachingAllocator* a = new CudaCachingAllocator();  // never destroyed: tensors may outlive statics
  set_allocator(Device::CUDA, a);
  set_device_copy(&copy);
}

const bool registered = [] {
  runtime::install.set(&install);
  return true;
}();

}  // namespace

}  // namespace ember::cuda

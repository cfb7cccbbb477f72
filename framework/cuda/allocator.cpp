// The CUDA caching allocator and the host<->device copier, installed on first use of a CUDA tensor.
//
// cudaMalloc and cudaFree are slow (cudaFree synchronises the whole device), so freed blocks are
// kept in size bins and handed out again, as PyTorch's caching allocator does (much simplified:
// exact-size bins after rounding, no block splitting). All of Ember's kernels run on the legacy
// default stream, so a block freed by one op and reused by the next is ordered by the stream.
#include <algorithm>
#include <string>

#include "framework/cuda/check.h"
#include "framework/core/caching_allocator.h"
#include "framework/core/cuda.h"
#include "framework/core/cuda_hooks.h"
#include "framework/core/device_copy.h"
#include "framework/core/storage.h"

namespace ember::cuda {
namespace {

class CudaCachingAllocator : public CachingAllocator {
 protected:
  // Bin size: 512-byte steps up to 1 MiB, then steps of an eighth of the next power of two
  // (at most 12.5% waste), so that near-equal large requests share a bin.
  size_t round(size_t b) const override {
    constexpr size_t kSmall = size_t(1) << 20;
    if (b <= kSmall) return b == 0 ? 512 : (b + 511) / 512 * 512;
    size_t p2 = kSmall;
    while (p2 < b) p2 <<= 1;
    size_t step = std::max(kSmall, p2 / 8);
    return (b + step - 1) / step * step;
  }
  // Any failure reads as "no block": the base class empties the cache and asks once more.
  void* obtain(size_t size) override {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaSuccess) return p;
    cudaGetLastError();  // clear the sticky error so that the next call does not see it
    last_error_ = cudaGetErrorString(e);
    return nullptr;
  }
  void give_back(void* p) noexcept override { cudaFree(p); }
  std::string out_of_memory(size_t size, int64_t in_use) const override {
    return str("out of memory on cuda: could not allocate ", size, " bytes (", last_error_, "); Ember holds ",
               in_use, " bytes in tensors");
  }

 private:
  const char* last_error_ = "";
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

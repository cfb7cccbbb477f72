// How Ember runs Thrust: on the stream its kernels use, with temporary storage from Ember's
// caching allocator, and with every failure turned into ember::Error. CUDA-only (.cu files).
//
// Stream: Ember launches every kernel on the default stream (framework/core/cuda.h has no
// "current stream"), so Thrust gets that same stream, and its work is ordered with Ember's
// kernels and copies without extra synchronisation. par_nosync: Thrust need not wait for the
// GPU after each algorithm; a later copy to the host (or cuda::synchronize) waits as for any kernel.
// Temporary storage: Thrust asks for scratch memory (radix-sort double buffers, scan partials)
// on every call; cudaMalloc/cudaFree there would synchronise the device, so it comes from the
// caching allocator instead. A block returned while a kernel still reads it is safe for the
// same reason as any Ember tensor's: the next user is ordered behind it on the same stream.
#pragma once
#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>

#include <cstddef>
#include <new>

#include "framework/cuda/check.h"
#include "framework/core/storage.h"

namespace ember::cuda {

// The allocator interface Thrust expects for temporary storage (bytes, as char).
struct ThrustScratch {
  using value_type = char;
  char* allocate(std::ptrdiff_t bytes) { return static_cast<char*>(allocator(Device::CUDA).allocate(size_t(bytes))); }
  void deallocate(char* p, size_t bytes) { allocator(Device::CUDA).deallocate(p, bytes); }
};

// A typed device buffer from the caching allocator, returned on scope exit (also on throw).
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int64_t n) : bytes_(size_t(n) * sizeof(T)) {
    p_ = static_cast<T*>(allocator(Device::CUDA).allocate(bytes_));
  }
  ~DeviceBuffer() { allocator(Device::CUDA).deallocate(p_, bytes_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
  size_t bytes_ = 0;
};

// Runs f(policy); Thrust's exceptions (thrust::system_error for CUDA errors, std::bad_alloc
// when its own allocation fails) become ember::Error naming the op. ember::Error passes through.
template <class F>
void with_thrust(const char* op, F&& f) {
  ThrustScratch scratch;
  try {
    f(thrust::cuda::par_nosync(scratch).on(cudaStream_t(0)));
  } catch (const Error&) {
    throw;
  } catch (const thrust::system_error& e) {
    cudaGetLastError();  // clear a non-sticky error so that the next call does not report it again
    throw Error(str(op, ": Thrust failed on cuda: ", e.what(), " (code ", e.code().value(), ")"));
  } catch (const std::bad_alloc& e) {
    throw Error(str(op, ": Thrust could not allocate temporary memory on cuda (", e.what(), ")"));
  }
}

}  // namespace ember::cuda

// The CUDA backend's public face, usable from plain C++ (no CUDA headers here), so that programs
// and tests compile and run the same way whether or not Ember was built with CUDA.
//
// Nothing here touches the GPU until it is called: a CPU-only program never initialises CUDA.
// The backend (caching allocator, host<->device copies) installs itself on the first use of a
// CUDA tensor (framework/core/storage.cpp asks for it), so `x.to(Device::CUDA)` is all a user writes.
#pragma once
#include <cstdint>
#include <string>

#include "framework/core/tensor.h"

namespace ember {

// True when Ember was built with CUDA and a GPU is usable. Any error from cudaGetDeviceCount
// (no driver, driver too old, no device) means "no GPU"; the first call decides, later calls are free.
bool cuda_available();

namespace cuda {

bool built_with_cuda();            // was the CUDA backend (libember_cuda.so) built and installed beside the core? Decided at run time
std::string unavailable_reason();  // why cuda_available() is false ("" when it is true)
std::string device_name();         // the GPU's name, e.g. "NVIDIA H200"; throws without a GPU
int64_t l2_cache_bytes();          // size of the GPU's L2 cache (for benchmarks that flush it)
void synchronize();                // waits for all work on the GPU; throws on a pending kernel error

// Installs the caching allocator and the host<->device copier; idempotent and thread-safe.
// Throws ember::Error naming the reason when no GPU is usable.
void ensure_backend();

// Random tensors generated on the GPU by cuRAND (Philox), float32 or float64. Deterministic for
// a seed on one GPU; a different stream of numbers from the CPU's Generator.
Tensor rand(const Shape& shape, DType dtype, uint64_t seed);                         // U[0, 1)
Tensor randn(const Shape& shape, DType dtype, uint64_t seed);                        // N(0, 1)
Tensor normal(const Shape& shape, double mean, double stddev, DType dtype, uint64_t seed);

// A CUDA stream and an event, as RAII handles (opaque here; framework/cuda/check.h exposes the
// raw types to CUDA code). Ember's kernels run on the legacy default stream; these serve
// timing (events) and user-level overlap of copies.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(void* stream = nullptr);  // records on `stream` (nullptr: the default stream)
  void synchronize() const;
  float elapsed_ms(const Event& since) const;  // time from `since` to this event, both recorded and done
  void* handle() const { return ev_; }

 private:
  void* ev_ = nullptr;
};

class Stream {
 public:
  Stream();  // a new non-blocking stream
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void synchronize() const;
  void wait(const Event& e) const;  // later work on this stream waits for e
  void* handle() const { return s_; }

 private:
  void* s_ = nullptr;
};

}  // namespace cuda
}  // namespace ember

// The core's side of the CUDA backend: finds and opens libember_cuda.so the first time anything
// asks for CUDA, and forwards framework/core/cuda.h to the hooks it fills. Until then no CUDA
// library is mapped: a CPU program stays a few megabytes.
#include <mutex>

#include "framework/core/cuda.h"
#include "framework/core/cuda_hooks.h"
#include "framework/core/shared_library.h"

namespace ember {

namespace cuda::runtime {
BackendHook<std::string()> probe("cuda probe");
BackendHook<void()> install("cuda install");
BackendHook<std::string()> device_name("cuda::device_name");
BackendHook<int64_t()> l2_cache_bytes("cuda::l2_cache_bytes");
BackendHook<void()> synchronize("cuda::synchronize");
BackendHook<void(const Tensor&, double)> fill("cuda fill_");
BackendHook<Tensor(const Shape&, DType, uint64_t)> rand("cuda::rand");
BackendHook<Tensor(const Shape&, double, double, DType, uint64_t)> normal("cuda::normal");
BackendHook<void*()> event_create("cuda::Event");
BackendHook<void(void*)> event_destroy("cuda::~Event");
BackendHook<void(void*, void*)> event_record("cuda::Event::record");
BackendHook<void(void*)> event_synchronize("cuda::Event::synchronize");
BackendHook<float(void*, void*)> event_elapsed_ms("cuda::Event::elapsed_ms");
BackendHook<void*()> stream_create("cuda::Stream");
BackendHook<void(void*)> stream_destroy("cuda::~Stream");
BackendHook<void(void*)> stream_synchronize("cuda::Stream::synchronize");
BackendHook<void(void*, void*)> stream_wait("cuda::Stream::wait");
}  // namespace cuda::runtime

namespace {

struct Detection {
  bool built = false;  // libember_cuda.so exists beside the core
  bool available = false;
  std::string reason;
};

const Detection& detect() {
  static Detection d;
  static std::once_flag once;
  std::call_once(once, [] {
    const LoadedLibrary& lib = load_sibling_library("libember_cuda.so", "EMBER_CUDA_BACKEND");
    d.built = lib.found;
    if (!lib.found) {
      d.reason = "Ember was built without CUDA (" + lib.error + "; configure with -DEMBER_CUDA=ON where nvcc exists)";
    } else if (!lib.ok) {
      d.reason = "the CUDA backend " + lib.path + " could not be loaded: " + lib.error;
    } else {
      d.reason = cuda::runtime::probe();
      d.available = d.reason.empty();
    }
  });
  return d;
}

[[noreturn]] void no_cuda(const char* what) { throw Error(str(what, ": ", detect().reason)); }

void require(const char* what) {
  if (!detect().available) no_cuda(what);
}

}  // namespace

bool cuda_available() { return detect().available; }

namespace cuda {

bool built_with_cuda() { return detect().built; }
std::string unavailable_reason() { return detect().reason; }

std::string device_name() {
  require("cuda::device_name");
  return runtime::device_name();
}
int64_t l2_cache_bytes() {
  require("cuda::l2_cache_bytes");
  return runtime::l2_cache_bytes();
}
void synchronize() {
  require("cuda::synchronize");
  runtime::synchronize();
}
void ensure_backend() {
  if (!detect().available) throw Error(str("device cuda is not available: ", detect().reason));
  static std::once_flag once;
  std::call_once(once, [] { runtime::install(); });
}

Tensor rand(const Shape& shape, DType dtype, uint64_t seed) {
  require("cuda::rand");
  ensure_backend();
  return runtime::rand(shape, dtype, seed);
}
Tensor normal(const Shape& shape, double mean, double stddev, DType dtype, uint64_t seed) {
  require("cuda::normal");
  ensure_backend();
  return runtime::normal(shape, mean, stddev, dtype, seed);
}
Tensor randn(const Shape& shape, DType dtype, uint64_t seed) { return normal(shape, 0.0, 1.0, dtype, seed); }

Event::Event() {
  require("cuda::Event");
  ensure_backend();
  ev_ = runtime::event_create();
}
Event::~Event() {
  if (ev_) runtime::event_destroy(ev_);
}
void Event::record(void* stream) { runtime::event_record(ev_, stream); }
void Event::synchronize() const { runtime::event_synchronize(ev_); }
float Event::elapsed_ms(const Event& since) const { return runtime::event_elapsed_ms(since.ev_, ev_); }

Stream::Stream() {
  require("cuda::Stream");
  ensure_backend();
  s_ = runtime::stream_create();
}
Stream::~Stream() {
  if (s_) runtime::stream_destroy(s_);
}
void Stream::synchronize() const { runtime::stream_synchronize(s_); }
void Stream::wait(const Event& e) const { runtime::stream_wait(s_, e.handle()); }

}  // namespace cuda
}  // namespace ember

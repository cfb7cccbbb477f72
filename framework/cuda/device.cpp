// Device detection, events and streams. Built in every configuration: without CUDA the queries
// answer "no GPU" and the rest throws, so that callers need no #ifdefs.
#include "framework/cuda/cuda.h"

#include <mutex>

#ifdef EMBER_HAS_CUDA
#include "framework/cuda/check.h"
#endif

namespace ember {

namespace {
struct Detection {
  bool available = false;
  std::string reason;
};

const Detection& detect() {
  static Detection d;
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef EMBER_HAS_CUDA
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      d.reason = str("cudaGetDeviceCount failed: ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ")");
    } else if (n == 0) {
      d.reason = "no CUDA device found";
    } else {
      d.available = true;
    }
#else
    d.reason = "Ember was built without CUDA (configure with -DEMBER_CUDA=ON where nvcc exists)";
#endif
  });
  return d;
}
}  // namespace

bool cuda_available() { return detect().available; }

namespace cuda {

std::string unavailable_reason() { return detect().reason; }

#ifdef EMBER_HAS_CUDA
bool built_with_cuda() { return true; }

std::string device_name() {
  EMBER_CHECK(cuda_available(), "cuda::device_name: no GPU: ", unavailable_reason());
  cudaDeviceProp p{};
  int dev = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&dev));
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  return p.name;
}

int64_t l2_cache_bytes() {
  EMBER_CHECK(cuda_available(), "cuda::l2_cache_bytes: no GPU: ", unavailable_reason());
  int dev = 0, l2 = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&dev));
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  return l2;
}

void synchronize() { EMBER_CUDA_CHECK(cudaDeviceSynchronize()); }

const char* curand_status_name(curandStatus_t s) {
  switch (s) {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
  }
  return "CURAND_STATUS_UNKNOWN";
}

cublasHandle_t cublas_handle() {
  // One per thread, never destroyed: destroying it from a static destructor can run after the
  // driver has shut down.
  thread_local cublasHandle_t h = [] {
    ensure_backend();
    cublasHandle_t handle = nullptr;
    EMBER_CUDA_CHECK(cublasCreate(&handle));
    return handle;
  }();
  return h;
}

Event::Event() {
  ensure_backend();
  cudaEvent_t e = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreate(&e));
  ev_ = e;
}
Event::~Event() {
  if (ev_) cudaEventDestroy(static_cast<cudaEvent_t>(ev_));
}
void Event::record(void* stream) {
  EMBER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(ev_), static_cast<cudaStream_t>(stream)));
}
void Event::synchronize() const { EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(ev_))); }
float Event::elapsed_ms(const Event& since) const {
  float ms = 0;
  EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(since.ev_), static_cast<cudaEvent_t>(ev_)));
  return ms;
}

Stream::Stream() {
  ensure_backend();
  cudaStream_t s = nullptr;
  EMBER_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  s_ = s;
}
Stream::~Stream() {
  if (s_) cudaStreamDestroy(static_cast<cudaStream_t>(s_));
}
void Stream::synchronize() const { EMBER_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(s_))); }
void Stream::wait(const Event& e) const {
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(s_), static_cast<cudaEvent_t>(e.handle()), 0));
}

#else  // built without CUDA: every entry point explains why it cannot run

namespace {
[[noreturn]] void no_cuda(const char* what) { throw Error(str(what, ": ", unavailable_reason())); }
}  // namespace

bool built_with_cuda() { return false; }
std::string device_name() { no_cuda("cuda::device_name"); }
int64_t l2_cache_bytes() { no_cuda("cuda::l2_cache_bytes"); }
void synchronize() { no_cuda("cuda::synchronize"); }
void ensure_backend() { no_cuda("device cuda"); }
Tensor rand(const Shape&, DType, uint64_t) { no_cuda("cuda::rand"); }
Tensor randn(const Shape&, DType, uint64_t) { no_cuda("cuda::randn"); }
Tensor normal(const Shape&, double, double, DType, uint64_t) { no_cuda("cuda::normal"); }
Event::Event() { no_cuda("cuda::Event"); }
Event::~Event() = default;
void Event::record(void*) { no_cuda("cuda::Event::record"); }
void Event::synchronize() const { no_cuda("cuda::Event::synchronize"); }
float Event::elapsed_ms(const Event&) const { no_cuda("cuda::Event::elapsed_ms"); }
Stream::Stream() { no_cuda("cuda::Stream"); }
Stream::~Stream() = default;
void Stream::synchronize() const { no_cuda("cuda::Stream::synchronize"); }
void Stream::wait(const Event&) const { no_cuda("cuda::Stream::wait"); }

#endif

}  // namespace cuda
}  // namespace ember

// Device detection, queries, events and streams: the backend's side of framework/core/cuda.h,
// filled into the core's hooks (runtime_hooks.h) when libember_cuda.so is loaded.
#include "framework/cuda/check.h"
#include "framework/core/cuda.h"
#include "framework/core/cuda_hooks.h"

namespace ember::cuda {

namespace {

std::string probe() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return str("cudaGetDeviceCount failed: ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ")");
  }
  return n == 0 ? "no CUDA device found" : "";
}

std::string name() {
  cudaDeviceProp p{};
  int dev = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&dev));
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  return p.name;
}

int64_t l2_bytes() {
  int dev = 0, l2 = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&dev));
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  return l2;
}

void sync() { EMBER_CUDA_CHECK(cudaDeviceSynchronize()); }

cudaEvent_t ev(void* e) { return static_cast<cudaEvent_t>(e); }
cudaStream_t st(void* s) { return static_cast<cudaStream_t>(s); }

const bool registered = [] {
  runtime::probe.set(&probe);
  runtime::device_name.set(&name);
  runtime::l2_cache_bytes.set(&l2_bytes);
  runtime::synchronize.set(&sync);
  runtime::event_create.set([]() -> void* {
    cudaEvent_t e = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreate(&e));
    return e;
  });
  runtime::event_destroy.set([](void* e) { cudaEventDestroy(ev(e)); });
  runtime::event_record.set([](void* e, void* s) { EMBER_CUDA_CHECK(cudaEventRecord(ev(e), st(s))); });
  runtime::event_synchronize.set([](void* e) { EMBER_CUDA_CHECK(cudaEventSynchronize(ev(e))); });
  runtime::event_elapsed_ms.set([](void* since, void* until) {
    float ms = 0;
    EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, ev(since), ev(until)));
    return ms;
  });
  runtime::stream_create.set([]() -> void* {
    cudaStream_t s = nullptr;
    EMBER_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  });
  runtime::stream_destroy.set([](void* s) { cudaStreamDestroy(st(s)); });
  runtime::stream_synchronize.set([](void* s) { EMBER_CUDA_CHECK(cudaStreamSynchronize(st(s))); });
  runtime::stream_wait.set([](void* s, void* e) { EMBER_CUDA_CHECK(cudaStreamWaitEvent(st(s), ev(e), 0)); });
  return true;
}();

}  // namespace

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

}  // namespace ember::cuda

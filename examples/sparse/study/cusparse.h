// cuSPARSE (generic API) and cuBLAS on raw device arrays: the GPU side of the sparse study
// (examples/sparse). Study code, not the library's: Ember has no sparse CUDA op, and this module
// exists to measure what a program pays to run one, setup included.
//
// So it owns what it measures: it allocates with cudaMalloc and copies with cudaMemcpy (a caching
// allocator would hide the first call's allocation cost after one repeat), and it creates and
// destroys its own cuSPARSE and cuBLAS handles (release_handles(), so that every repeat of a
// "with setup" timing pays for them as a fresh program does). Its one error path is the
// backend's: every CUDA, cuSPARSE and cuBLAS status goes through EMBER_CUDA_CHECK
// (framework/cuda/check.h) and becomes an ember::Error. Values are float32 and indices int32
// (cuSPARSE's SpGEMM accepts only 32-bit indices; see ops/sparse/csr.h).
//
// Handles (one cuSPARSE, one cuBLAS) and a workspace buffer are created on first use and cached;
// each matrix caches its own cuSPARSE descriptor, each dense operand its vector and matrix
// descriptors. Calls are serialised by one mutex (a cuSPARSE handle must not be used by two
// threads at once).
//
// Only built with the CUDA backend (the static library ember_sparse_cuda_study, study.cmake):
// include it and call it under #ifdef EMBER_HAS_CUDA.
#pragma once
#ifdef EMBER_HAS_CUDA
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "framework/core/tensor.h"
#include "ops/sparse/csr.h"

namespace ember::sparse_cuda_study {

// True when a GPU can be used. Any CUDA error (no driver, no device) means false; never throws,
// and touches CUDA only when called.
bool available();
std::string device_name();  // e.g. "NVIDIA H200"

// Device memory owned by this object (cudaMalloc / cudaFree). Zero bytes hold no allocation.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void upload(const void* host, size_t bytes);        // host -> device, bytes <= this->bytes()
  void download(void* host, size_t bytes) const;      // device -> host
  void reserve(size_t bytes);                         // at least `bytes`, contents discarded when it grows

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A float32 CSR matrix on the GPU.
struct DeviceCsr {
  int64_t rows = 0, cols = 0, nnz = 0;
  DeviceBuffer row_ptr, col_idx, values;
  std::shared_ptr<void> descr;  // cusparseSpMatDescr_t, created on first use

  static DeviceCsr upload(const CsrTensor& a);  // a's values must be float32
  CsrTensor download() const;                    // rows sorted where needed, then validated
};

// A float32 row-major matrix on the GPU; a vector is a [n, 1] matrix.
struct DeviceDense {
  int64_t rows = 0, cols = 0;
  DeviceBuffer data;
  std::shared_ptr<void> vec_descr, mat_descr;  // cusparseDnVecDescr_t / cusparseDnMatDescr_t

  static DeviceDense upload(const Tensor& t);  // 1-d or 2-d float32
  static DeviceDense allocate(int64_t rows, int64_t cols);
  Tensor download() const;  // [rows, cols]; [rows] when it was uploaded as a vector
  bool is_vector = false;
};

void spmv(const DeviceCsr& a, DeviceDense& x, DeviceDense& y);  // y = A x (cusparseSpMV)
void spmm(const DeviceCsr& a, DeviceDense& b, DeviceDense& c);  // C = A B (cusparseSpMM)

// Where one cusparseSpGEMM spent its time (ms, host clock around synchronised phases).
struct SpgemmPhases {
  double work_estimation_ms = 0;  // both calls, buffer 1 allocation included
  double compute_ms = 0;          // both calls, buffer 2 allocation included
  double alloc_ms = 0;            // C's column and value arrays
  double copy_ms = 0;             // cusparseSpGEMM_copy into C's arrays
  size_t buffer1_bytes = 0, buffer2_bytes = 0;
};
// C = A B (cusparseSpGEMM with its two workspace queries).
DeviceCsr spgemm(const DeviceCsr& a, const DeviceCsr& b, SpgemmPhases* phases = nullptr);

void gemv(const DeviceDense& a, const DeviceDense& x, DeviceDense& y);  // cublasSgemv, row-major A
void gemm(const DeviceDense& a, const DeviceDense& b, DeviceDense& c);  // cublasSgemm, row-major, FP32 math

void synchronize();
// Destroys the cached handles and workspace; the next call re-creates them. For setup-cost
// measurements (what a program pays on its first sparse call).
void release_handles();
// Creates the cached handles now (a no-op when they exist) and returns the milliseconds it took.
double create_handles();

// Elapsed GPU time between start() and stop_ms(), with CUDA events.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start();
  double stop_ms();  // waits for the stop event

 private:
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

}  // namespace ember::sparse_cuda_study
#endif  // EMBER_HAS_CUDA

// The sparse study's cuSPARSE generic-API SpMV, SpMM and SpGEMM, cuBLAS GEMV/GEMM, device buffers
// and the cached handles, descriptors and workspace (see cusparse.h).
#include "examples/sparse/study/cusparse.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

#include "framework/cuda/check.h"

namespace ember::sparse_cuda_study {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The cached state. Leaked on purpose: destroying handles from a static destructor can run after
// the CUDA runtime has shut down; the driver frees everything at process exit.
struct Context {
  std::mutex mutex;
  cusparseHandle_t sparse = nullptr;
  cublasHandle_t blas = nullptr;
  DeviceBuffer workspace;
};
Context& context() {
  static Context* c = new Context;
  return *c;
}

// Called with the context's mutex held.
void ensure_handles(Context& c) {
  if (!c.sparse) EMBER_CUDA_CHECK(cusparseCreate(&c.sparse));
  if (!c.blas) EMBER_CUDA_CHECK(cublasCreate(&c.blas));
}

cusparseSpMatDescr_t csr_descr(const DeviceCsr& a) {
  if (!a.descr) {
    cusparseSpMatDescr_t d = nullptr;
    EMBER_CUDA_CHECK(cusparseCreateCsr(&d, a.rows, a.cols, a.nnz, a.row_ptr.get(), a.col_idx.get(),
                                              a.values.get(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                              CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    const_cast<DeviceCsr&>(a).descr = std::shared_ptr<void>(d, [](void* p) {
      cusparseDestroySpMat(static_cast<cusparseSpMatDescr_t>(p));
    });
  }
  return static_cast<cusparseSpMatDescr_t>(a.descr.get());
}

cusparseDnVecDescr_t vec_descr(DeviceDense& x) {
  if (!x.vec_descr) {
    cusparseDnVecDescr_t d = nullptr;
    EMBER_CUDA_CHECK(cusparseCreateDnVec(&d, x.rows * x.cols, x.data.get(), CUDA_R_32F));
    x.vec_descr = std::shared_ptr<void>(d, [](void* p) { cusparseDestroyDnVec(static_cast<cusparseDnVecDescr_t>(p)); });
  }
  return static_cast<cusparseDnVecDescr_t>(x.vec_descr.get());
}

cusparseDnMatDescr_t mat_descr(DeviceDense& x) {
  if (!x.mat_descr) {
    cusparseDnMatDescr_t d = nullptr;
    EMBER_CUDA_CHECK(
        cusparseCreateDnMat(&d, x.rows, x.cols, x.cols, x.data.get(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
    x.mat_descr = std::shared_ptr<void>(d, [](void* p) { cusparseDestroyDnMat(static_cast<cusparseDnMatDescr_t>(p)); });
  }
  return static_cast<cusparseDnMatDescr_t>(x.mat_descr.get());
}

void zero(DeviceDense& y) {
  if (y.data.bytes()) EMBER_CUDA_CHECK(cudaMemset(y.data.get(), 0, y.data.bytes()));
}

}  // namespace

bool available() {
  int n = 0;
  cudaError_t s = cudaGetDeviceCount(&n);
  if (s != cudaSuccess) {
    cudaGetLastError();  // reset the runtime's last-error state so that later checks start clean
    return false;
  }
  return n > 0;
}

std::string device_name() {
  cudaDeviceProp p{};
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  return p.name;
}

// ---- DeviceBuffer ----
DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes) EMBER_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);  // no throw from a destructor; a failure here leaks at worst
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}
void DeviceBuffer::upload(const void* host, size_t bytes) {
  EMBER_CHECK(bytes <= bytes_, "DeviceBuffer::upload: ", bytes, " bytes into a buffer of ", bytes_);
  if (bytes) EMBER_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
}
void DeviceBuffer::download(void* host, size_t bytes) const {
  EMBER_CHECK(bytes <= bytes_, "DeviceBuffer::download: ", bytes, " bytes from a buffer of ", bytes_);
  if (bytes) EMBER_CUDA_CHECK(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost));
}
void DeviceBuffer::reserve(size_t bytes) {
  if (bytes > bytes_) *this = DeviceBuffer(bytes);
}

// ---- DeviceCsr / DeviceDense ----
DeviceCsr DeviceCsr::upload(const CsrTensor& a) {
  EMBER_CHECK(a.defined() && a.dtype() == DType::Float32, "sparse_cuda_study::DeviceCsr::upload: expected float32 values, got ",
              a.defined() ? name(a.dtype()) : "an undefined matrix");
  const CsrPattern& p = a.pattern();
  Tensor v = a.values().detach().contiguous();
  DeviceCsr d;
  d.rows = p.rows;
  d.cols = p.cols;
  d.nnz = p.nnz();
  d.row_ptr = DeviceBuffer(p.row_ptr.size() * sizeof(int32_t));
  d.col_idx = DeviceBuffer(p.col_idx.size() * sizeof(int32_t));
  d.values = DeviceBuffer(size_t(d.nnz) * sizeof(float));
  d.row_ptr.upload(p.row_ptr.data(), d.row_ptr.bytes());
  d.col_idx.upload(p.col_idx.data(), d.col_idx.bytes());
  d.values.upload(v.data<float>(), d.values.bytes());
  return d;
}

CsrTensor DeviceCsr::download() const {
  std::vector<int32_t> rp(static_cast<size_t>(rows + 1)), ci(static_cast<size_t>(nnz));
  row_ptr.download(rp.data(), rp.size() * sizeof(int32_t));
  col_idx.download(ci.data(), ci.size() * sizeof(int32_t));
  Tensor v = empty({nnz}, DType::Float32);
  values.download(v.data<float>(), size_t(nnz) * sizeof(float));
  // cuSPARSE does not promise sorted columns in every result (SpGEMM's among them), while a CsrPattern
  // must be sorted: sort the rows that are not, carrying their values along, then validate.
  float* pv = v.data<float>();
  std::vector<std::pair<int32_t, float>> row;
  for (int64_t i = 0; i < rows; ++i) {
    int32_t b = rp[size_t(i)], e = rp[size_t(i + 1)];
    if (b < 0 || e > nnz || b > e || std::is_sorted(ci.begin() + b, ci.begin() + e)) continue;
    row.clear();
    for (int32_t k = b; k < e; ++k) row.push_back({ci[size_t(k)], pv[k]});
    std::sort(row.begin(), row.end());
    for (int32_t k = b; k < e; ++k) {
      ci[size_t(k)] = row[size_t(k - b)].first;
      pv[k] = row[size_t(k - b)].second;
    }
  }
  std::vector<int64_t> rp64(rp.begin(), rp.end()), ci64(ci.begin(), ci.end());
  return CsrTensor(make_csr_pattern(rows, cols, rp64, ci64, "sparse_cuda_study::DeviceCsr::download"), v);
}

DeviceDense DeviceDense::allocate(int64_t rows, int64_t cols) {
  DeviceDense d;
  d.rows = rows;
  d.cols = cols;
  d.data = DeviceBuffer(size_t(rows * cols) * sizeof(float));
  return d;
}

DeviceDense DeviceDense::upload(const Tensor& t) {
  EMBER_CHECK(t.defined() && t.dtype() == DType::Float32 && (t.dim() == 1 || t.dim() == 2),
              "sparse_cuda_study::DeviceDense::upload: expected a 1-d or 2-d float32 tensor");
  Tensor c = t.detach().contiguous();
  DeviceDense d = allocate(c.size(0), c.dim() == 2 ? c.size(1) : 1);
  d.is_vector = c.dim() == 1;
  d.data.upload(c.data<float>(), d.data.bytes());
  return d;
}

Tensor DeviceDense::download() const {
  Tensor t = empty(is_vector ? Shape{rows} : Shape{rows, cols}, DType::Float32);
  data.download(t.data<float>(), size_t(rows * cols) * sizeof(float));
  return t;
}

// ---- operations ----
void spmv(const DeviceCsr& a, DeviceDense& x, DeviceDense& y) {
  EMBER_CHECK(x.rows * x.cols == a.cols && y.rows * y.cols == a.rows, "sparse_cuda_study::spmv: A is [", a.rows, ", ", a.cols,
              "], x has ", x.rows * x.cols, " and y ", y.rows * y.cols, " elements");
  if (a.nnz == 0 || a.rows == 0 || a.cols == 0) return zero(y);
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  ensure_handles(c);
  const float alpha = 1.f, beta = 0.f;
  size_t bytes = 0;
  EMBER_CUDA_CHECK(cusparseSpMV_bufferSize(c.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, csr_descr(a),
                                                  vec_descr(x), &beta, vec_descr(y), CUDA_R_32F,
                                                  CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  c.workspace.reserve(bytes);
  EMBER_CUDA_CHECK(cusparseSpMV(c.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, csr_descr(a), vec_descr(x),
                                       &beta, vec_descr(y), CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, c.workspace.get()));
}

void spmm(const DeviceCsr& a, DeviceDense& b, DeviceDense& out) {
  EMBER_CHECK(b.rows == a.cols && out.rows == a.rows && out.cols == b.cols, "sparse_cuda_study::spmm: A [", a.rows, ", ", a.cols,
              "] times B [", b.rows, ", ", b.cols, "] into C [", out.rows, ", ", out.cols, "]");
  if (a.nnz == 0 || a.rows == 0 || a.cols == 0 || b.cols == 0) return zero(out);
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  ensure_handles(c);
  const float alpha = 1.f, beta = 0.f;
  size_t bytes = 0;
  EMBER_CUDA_CHECK(cusparseSpMM_bufferSize(c.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                  CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, csr_descr(a), mat_descr(b),
                                                  &beta, mat_descr(out), CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
  c.workspace.reserve(bytes);
  EMBER_CUDA_CHECK(cusparseSpMM(c.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       &alpha, csr_descr(a), mat_descr(b), &beta, mat_descr(out), CUDA_R_32F,
                                       CUSPARSE_SPMM_ALG_DEFAULT, c.workspace.get()));
}

DeviceCsr spgemm(const DeviceCsr& a, const DeviceCsr& b, SpgemmPhases* phases) {
  EMBER_CHECK(a.cols == b.rows, "sparse_cuda_study::spgemm: inner dimensions differ, [", a.rows, ", ", a.cols, "] @ [", b.rows,
              ", ", b.cols, "]");
  DeviceCsr out;
  out.rows = a.rows;
  out.cols = b.cols;
  out.row_ptr = DeviceBuffer(size_t(out.rows + 1) * sizeof(int32_t));
  if (a.nnz == 0 || b.nnz == 0 || out.rows == 0 || out.cols == 0) {  // cuSPARSE rejects empty operands
    if (out.row_ptr.bytes()) EMBER_CUDA_CHECK(cudaMemset(out.row_ptr.get(), 0, out.row_ptr.bytes()));
    return out;
  }
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  ensure_handles(c);
  SpgemmPhases ph;
  const float alpha = 1.f, beta = 0.f;
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  cusparseSpMatDescr_t mc = nullptr;
  EMBER_CUDA_CHECK(cusparseCreateCsr(&mc, out.rows, out.cols, 0, out.row_ptr.get(), nullptr, nullptr,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                            CUDA_R_32F));
  out.descr = std::shared_ptr<void>(mc, [](void* p) { cusparseDestroySpMat(static_cast<cusparseSpMatDescr_t>(p)); });
  cusparseSpGEMMDescr_t sd = nullptr;
  EMBER_CUDA_CHECK(cusparseSpGEMM_createDescr(&sd));
  std::shared_ptr<void> sd_guard(sd, [](void* p) { cusparseSpGEMM_destroyDescr(static_cast<cusparseSpGEMMDescr_t>(p)); });
  cusparseSpMatDescr_t ma = csr_descr(a), mb = csr_descr(b);

  auto t0 = Clock::now();
  size_t s1 = 0;
  EMBER_CUDA_CHECK(cusparseSpGEMM_workEstimation(c.sparse, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_32F,
                                                        CUSPARSE_SPGEMM_DEFAULT, sd, &s1, nullptr));
  DeviceBuffer w1(s1);
  EMBER_CUDA_CHECK(cusparseSpGEMM_workEstimation(c.sparse, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_32F,
                                                        CUSPARSE_SPGEMM_DEFAULT, sd, &s1, w1.get()));
  EMBER_CUDA_CHECK(cudaDeviceSynchronize());
  ph.work_estimation_ms = ms_since(t0);

  t0 = Clock::now();
  size_t s2 = 0;
  EMBER_CUDA_CHECK(cusparseSpGEMM_compute(c.sparse, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_32F,
                                                 CUSPARSE_SPGEMM_DEFAULT, sd, &s2, nullptr));
  DeviceBuffer w2(s2);
  EMBER_CUDA_CHECK(cusparseSpGEMM_compute(c.sparse, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_32F,
                                                 CUSPARSE_SPGEMM_DEFAULT, sd, &s2, w2.get()));
  EMBER_CUDA_CHECK(cudaDeviceSynchronize());
  ph.compute_ms = ms_since(t0);

  t0 = Clock::now();
  int64_t r = 0, cc = 0, nnz = 0;
  EMBER_CUDA_CHECK(cusparseSpMatGetSize(mc, &r, &cc, &nnz));
  EMBER_CHECK(nnz <= INT32_MAX, "sparse_cuda_study::spgemm: the product has ", nnz, " nonzeros, beyond the int32 index limit");
  out.nnz = nnz;
  out.col_idx = DeviceBuffer(size_t(nnz) * sizeof(int32_t));
  out.values = DeviceBuffer(size_t(nnz) * sizeof(float));
  EMBER_CUDA_CHECK(cusparseCsrSetPointers(mc, out.row_ptr.get(), out.col_idx.get(), out.values.get()));
  ph.alloc_ms = ms_since(t0);

  t0 = Clock::now();
  EMBER_CUDA_CHECK(cusparseSpGEMM_copy(c.sparse, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_32F,
                                              CUSPARSE_SPGEMM_DEFAULT, sd));
  EMBER_CUDA_CHECK(cudaDeviceSynchronize());
  ph.copy_ms = ms_since(t0);
  ph.buffer1_bytes = s1;
  ph.buffer2_bytes = s2;
  if (phases) *phases = ph;
  return out;
}

void gemv(const DeviceDense& a, const DeviceDense& x, DeviceDense& y) {
  EMBER_CHECK(x.rows * x.cols == a.cols && y.rows * y.cols == a.rows, "sparse_cuda_study::gemv: A [", a.rows, ", ", a.cols,
              "] with x of ", x.rows * x.cols, " and y of ", y.rows * y.cols, " elements");
  if (a.rows == 0) return;
  if (a.cols == 0) return zero(y);
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  ensure_handles(c);
  const float alpha = 1.f, beta = 0.f;
  // Row-major A is column-major A^T (cols x rows, ld = cols); y = (A^T)^T x.
  EMBER_CUDA_CHECK(cublasSgemv(c.blas, CUBLAS_OP_T, int(a.cols), int(a.rows), &alpha,
                                      static_cast<const float*>(a.data.get()), int(a.cols),
                                      static_cast<const float*>(x.data.get()), 1, &beta,
                                      static_cast<float*>(y.data.get()), 1));
}

void gemm(const DeviceDense& a, const DeviceDense& b, DeviceDense& out) {
  EMBER_CHECK(a.cols == b.rows && out.rows == a.rows && out.cols == b.cols, "sparse_cuda_study::gemm: [", a.rows, ", ", a.cols,
              "] @ [", b.rows, ", ", b.cols, "] into [", out.rows, ", ", out.cols, "]");
  if (out.rows == 0 || out.cols == 0) return;
  if (a.cols == 0) return zero(out);
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  ensure_handles(c);
  const float alpha = 1.f, beta = 0.f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  EMBER_CUDA_CHECK(cublasSgemm(c.blas, CUBLAS_OP_N, CUBLAS_OP_N, int(b.cols), int(a.rows), int(a.cols), &alpha,
                                      static_cast<const float*>(b.data.get()), int(b.cols),
                                      static_cast<const float*>(a.data.get()), int(a.cols), &beta,
                                      static_cast<float*>(out.data.get()), int(out.cols)));
}

void synchronize() { EMBER_CUDA_CHECK(cudaDeviceSynchronize()); }

void release_handles() {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.sparse) EMBER_CUDA_CHECK(cusparseDestroy(c.sparse));
  if (c.blas) EMBER_CUDA_CHECK(cublasDestroy(c.blas));
  c.sparse = nullptr;
  c.blas = nullptr;
  c.workspace = DeviceBuffer();
}

double create_handles() {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto t0 = Clock::now();
  ensure_handles(c);
  return ms_since(t0);
}

// ---- EventTimer ----
EventTimer::EventTimer() {
  cudaEvent_t a = nullptr, b = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreate(&a));
  EMBER_CUDA_CHECK(cudaEventCreate(&b));
  start_ = a;
  stop_ = b;
}
EventTimer::~EventTimer() {
  cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}
void EventTimer::start() { EMBER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(start_))); }
double EventTimer::stop_ms() {
  EMBER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(stop_)));
  EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)));
  float ms = 0;
  EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)));
  return ms;
}

}  // namespace ember::sparse_cuda_study

// The __global__ wrappers around the phases of flash_kernel.h, and the host functions of
// attention_cuda.h: launches, cuBLAS for the standard path (the backend's handle), every CUDA and
// cuBLAS status through the backend's EMBER_CUDA_CHECK.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "framework/cuda/check.h"
#include "framework/core/error.h"
#include "ops/attention/cuda/attention_cuda.h"
#include "ops/attention/cuda/flash_kernel.h"

namespace ember::cuda_attn {

namespace {

using kern::Args;
using kern::Dim;

// ---- kernels: lay out shared memory, call the phases, barrier between them ----
template <class K, class T>
__global__ void flash_forward_kernel(Args<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto& sh = *reinterpret_cast<typename K::Shared*>(smem);
  typename K::Regs rg;
  const Dim block{int(blockIdx.x), int(blockIdx.y)}, thread{int(threadIdx.x), 0};
  K::init(a, sh, rg, block, thread);
  const int tc = K::col_blocks(a, block);
  for (int j = 0; j < tc; ++j) {
    __syncthreads();  // everyone is done with the previous K_j, V_j, S_ij
    K::load_kv(a, sh, block, thread, j);
    __syncthreads();
    K::scores(a, sh, block, thread, j);
    __syncthreads();
    K::update(a, sh, rg, thread);
  }
  K::store(a, rg, block, thread);
}

template <class T>
__global__ void rowdot_kernel(Args<T> a, int64_t rows) {
  kern::RowDot<T>::run(a, rows, Dim{int(blockIdx.x), 0}, Dim{int(threadIdx.x), 0});
}

template <class K, class T>
__global__ void flash_backward_kv_kernel(Args<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto& sh = *reinterpret_cast<typename K::Shared*>(smem);
  typename K::Regs rg;
  const Dim block{int(blockIdx.x), int(blockIdx.y)}, thread{int(threadIdx.x), 0};
  K::init(a, sh, rg, block, thread);
  const int tr = K::row_blocks(a);
  for (int i = K::first_row_block(a, block); i < tr; ++i) {
    __syncthreads();
    K::load_rows(a, sh, block, thread, i);
    __syncthreads();
    K::probs(a, sh, block, thread, i);
    __syncthreads();
    K::accumulate(a, sh, rg, thread);
  }
  K::store(a, rg, block, thread);
}

template <class K, class T>
__global__ void flash_backward_q_kernel(Args<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto& sh = *reinterpret_cast<typename K::Shared*>(smem);
  typename K::Regs rg;
  const Dim block{int(blockIdx.x), int(blockIdx.y)}, thread{int(threadIdx.x), 0};
  K::init(a, sh, rg, block, thread);
  const int tc = K::col_blocks(a, block);
  for (int j = 0; j < tc; ++j) {
    __syncthreads();
    K::load_kv(a, sh, block, thread, j);
    __syncthreads();
    K::dscores(a, sh, block, thread, j);
    __syncthreads();
    K::accumulate(a, sh, rg, thread);
  }
  K::store(a, rg, block, thread);
}

template <class K, class T>
__global__ void row_softmax_kernel(Args<T> a, T* p) {
  __shared__ typename K::Shared sh;
  typename K::Regs rg;
  const Dim block{int(blockIdx.x), int(blockIdx.y)}, thread{int(threadIdx.x), 0};
  K::partial_max(a, p, sh, block, thread);
  __syncthreads();
  K::partial_sum(a, p, sh, rg, block, thread);
  __syncthreads();
  K::normalise(a, p, sh, rg, block, thread);
}

template <class T>
__global__ void softmax_backward_kernel(Args<T> a, const T* p, T* ds, int64_t total) {
  kern::SoftmaxBackward<T>::run(a, p, ds, total, Dim{int(blockIdx.x), 0}, Dim{int(threadIdx.x), 0});
}

// ---- host side ----
template <class T>
Args<T> make_args(const Dims& dm) {
  Args<T> a;
  a.nq = dm.nq;
  a.nk = dm.nk;
  a.d = dm.d;
  a.scale = T(dm.scale);
  a.causal = dm.causal;
  return a;
}

dim3 as_dim3(kern::Grid g) { return dim3(unsigned(g.x), unsigned(g.y)); }

void check_grid(const Dims& dm) {
  EMBER_CHECK(dm.bh <= 65535, "attention (CUDA): batch * heads = ", dm.bh, " exceeds the grid's y limit 65535");
  EMBER_CHECK(dm.nq >= 1 && dm.nk >= 1 && dm.d >= 1, "attention (CUDA): empty problem");
}

// Runs `body<DMAX>()` with the smallest head-size bound that fits d.
template <class F>
void with_dmax(int64_t d, F&& body) {
  if (d <= 64) return body(std::integral_constant<int, 64>{});
  if (d <= 128) return body(std::integral_constant<int, 128>{});
  throw Error(str("attention (CUDA flash): head size d = ", d, " is larger than the supported 128"));
}

template <class KernelFn>
void set_smem(KernelFn fn, size_t bytes) {
  EMBER_CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

// Scratch from Ember's caching allocator: no cudaMalloc / cudaFree (which synchronises the device)
// per call. Every launch here is on the default stream, the stream the allocator orders its reuse
// by, so the block may go back to the cache as soon as the tensor dies, before the kernels finish.
template <class T>
Tensor device_scratch(int64_t n) {
  return empty({n}, dtype_of<T>::value, Device::CUDA);
}

// D_i = rowsum(dO_i * O_i) for every query row (both backwards need it): computed into scratch,
// which is returned so that the caller keeps it alive while later kernels read a.dvec.
template <class T>
Tensor row_dots(Args<T>& a, int64_t rows) {
  Tensor scratch = device_scratch<T>(rows);
  a.dvec_out = static_cast<T*>(scratch.raw_data());
  using K = kern::RowDot<T>;
  rowdot_kernel<T><<<as_dim3(K::grid(rows)), K::THREADS>>>(a, rows);
  EMBER_CUDA_CHECK_LAUNCH();
  a.dvec = a.dvec_out;
  return scratch;
}

// The backend's cuBLAS handle for this thread, on the default stream as every launch here.
cublasHandle_t handle() { return ::ember::cuda::cublas_handle(); }

// Row-major C (m x n) = alpha op(A) op(B) through column-major cuBLAS, batched with strides.
void gemm_batched(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const float* a, int lda,
                  long long sa, const float* b, int ldb, long long sb, float* c, int ldc, long long sc, int batch) {
  const float beta = 0;
  EMBER_CUDA_CHECK(cublasSgemmStridedBatched(handle(), ta, tb, m, n, k, &alpha, a, lda, sa, b, ldb, sb, &beta, c, ldc, sc, batch));
}
void gemm_batched(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, double alpha, const double* a,
                  int lda, long long sa, const double* b, int ldb, long long sb, double* c, int ldc, long long sc,
                  int batch) {
  const double beta = 0;
  EMBER_CUDA_CHECK(cublasDgemmStridedBatched(handle(), ta, tb, m, n, k, &alpha, a, lda, sa, b, ldb, sb, &beta, c, ldc, sc, batch));
}

}  // namespace

bool available() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it: no driver or no device just means "no GPU"
    return false;
  }
  return n > 0;
}

template <class T>
void flash_forward(const Dims& dm, const T* q, const T* k, const T* v, T* o, T* lse) {
  check_grid(dm);
  Args<T> a = make_args<T>(dm);
  a.q = q;
  a.k = k;
  a.v = v;
  a.out = o;
  a.out_lse = lse;
  with_dmax(dm.d, [&](auto dmax) {
    using K = kern::FlashForward<T, decltype(dmax)::value>;
    auto fn = flash_forward_kernel<K, T>;
    set_smem(fn, sizeof(typename K::Shared));
    fn<<<as_dim3(K::grid(dm.nq, dm.bh)), K::THREADS, sizeof(typename K::Shared)>>>(a);
    EMBER_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
void flash_backward(const Dims& dm, const T* q, const T* k, const T* v, const T* o, const T* lse, const T* dout, T* dq,
                    T* dk, T* dv) {
  check_grid(dm);
  Args<T> a = make_args<T>(dm);
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = o;
  a.lse = lse;
  a.dout = dout;
  a.dq = dq;
  a.dk = dk;
  a.dv = dv;
  const Tensor dvec = row_dots(a, dm.bh * dm.nq);
  with_dmax(dm.d, [&](auto dmax) {
    using KV = kern::FlashBackwardKV<T, decltype(dmax)::value>;
    using KQ = kern::FlashBackwardQ<T, decltype(dmax)::value>;
    auto fkv = flash_backward_kv_kernel<KV, T>;
    auto fq = flash_backward_q_kernel<KQ, T>;
    set_smem(fkv, sizeof(typename KV::Shared));
    set_smem(fq, sizeof(typename KQ::Shared));
    fkv<<<as_dim3(KV::grid(dm.nk, dm.bh)), KV::THREADS, sizeof(typename KV::Shared)>>>(a);
    EMBER_CUDA_CHECK_LAUNCH();
    fq<<<as_dim3(KQ::grid(dm.nq, dm.bh)), KQ::THREADS, sizeof(typename KQ::Shared)>>>(a);
    EMBER_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
void standard_forward(const Dims& dm, const T* q, const T* k, const T* v, T* p, T* o, T* lse) {
  check_grid(dm);
  const int nq = int(dm.nq), nk = int(dm.nk), d = int(dm.d), bh = int(dm.bh);
  // S = scale Q K^T (row-major: S^T = K Q^T in cuBLAS's column-major view).
  gemm_batched(CUBLAS_OP_T, CUBLAS_OP_N, nk, nq, d, T(dm.scale), k, d, (long long)nk * d, q, d, (long long)nq * d, p, nk,
               (long long)nq * nk, bh);
  Args<T> a = make_args<T>(dm);
  a.out_lse = lse;
  using K = kern::RowSoftmax<T>;
  row_softmax_kernel<K, T><<<as_dim3(K::grid(nq, bh)), K::THREADS>>>(a, p);
  EMBER_CUDA_CHECK_LAUNCH();
  // O = P V (row-major: O^T = V^T P^T).
  gemm_batched(CUBLAS_OP_N, CUBLAS_OP_N, d, nq, nk, T(1), v, d, (long long)nk * d, p, nk, (long long)nq * nk, o, d,
               (long long)nq * d, bh);
}

template <class T>
void standard_backward(const Dims& dm, const T* q, const T* k, const T* v, const T* o, const T* p, const T* dout, T* ds,
                       T* dq, T* dk, T* dv) {
  check_grid(dm);
  const int nq = int(dm.nq), nk = int(dm.nk), d = int(dm.d), bh = int(dm.bh);
  const long long sq = (long long)nq * d, sk = (long long)nk * d, sp = (long long)nq * nk;
  Args<T> a = make_args<T>(dm);
  a.o = o;
  a.dout = dout;
  const Tensor dvec = row_dots(a, dm.bh * dm.nq);
  // dV = P^T dO
  gemm_batched(CUBLAS_OP_N, CUBLAS_OP_T, d, nk, nq, T(1), dout, d, sq, p, nk, sp, dv, d, sk, bh);
  // dP = dO V^T
  gemm_batched(CUBLAS_OP_T, CUBLAS_OP_N, nk, nq, d, T(1), v, d, sk, dout, d, sq, ds, nk, sp, bh);
  // dS = P * (dP - D)
  const int64_t total = dm.bh * dm.nq * dm.nk;
  using KB = kern::SoftmaxBackward<T>;
  softmax_backward_kernel<T><<<as_dim3(KB::grid(total)), KB::THREADS>>>(a, p, ds, total);
  EMBER_CUDA_CHECK_LAUNCH();
  // dQ = scale dS K, dK = scale dS^T Q
  gemm_batched(CUBLAS_OP_N, CUBLAS_OP_N, d, nq, nk, T(dm.scale), k, d, sk, ds, nk, sp, dq, d, sq, bh);
  gemm_batched(CUBLAS_OP_N, CUBLAS_OP_T, d, nk, nq, T(dm.scale), q, d, sq, ds, nk, sp, dk, d, sk, bh);
}

#define EMBER_INSTANTIATE(T)                                                                                     \
  template void flash_forward<T>(const Dims&, const T*, const T*, const T*, T*, T*);                            \
  template void flash_backward<T>(const Dims&, const T*, const T*, const T*, const T*, const T*, const T*, T*, T*, \
                                  T*);                                                                           \
  template void standard_forward<T>(const Dims&, const T*, const T*, const T*, T*, T*, T*);                     \
  template void standard_backward<T>(const Dims&, const T*, const T*, const T*, const T*, const T*, const T*, T*, \
                                     T*, T*, T*);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember::cuda_attn

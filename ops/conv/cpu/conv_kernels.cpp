#include "ops/conv/cpu/conv_kernels.h"

#include <vector>

#include "framework/core/parallel.h"
#include "ops/conv/cpu/im2col.h"
#include "ops/matmul/matmul.h"

namespace ember::cpu {
namespace {

// C[m x n] = A B with A, B given by their row and column strides (elements).
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
          int64_t b_cs, T* c, int64_t c_rs) {
  GemmArgs args{m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, c_rs,
                std::is_same_v<T, float> ? DType::Float32 : DType::Float64};
  cpu_gemm(args, MatmulOptions{});
}

// Splits the n images into at most num_threads() contiguous chunks and calls f(chunk, lo, hi) for
// each on its own thread, so that a chunk can keep private buffers.
template <class F>
void for_image_chunks(int64_t n, F&& f) {
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(num_threads(), n));
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) f(c, c * n / chunks, (c + 1) * n / chunks);
  });
}

template <class T>
void forward(const ConvGeometry& g, const T* x, const T* w, const T* b, T* y) {
  const int64_t L = g.l(), K = g.k_g(), M = g.cout_g(), Cg = g.cin_g();
  for_image_chunks(g.n, [&](int64_t, int64_t lo, int64_t hi) {
    std::vector<T> cols(g.pointwise() ? 0 : size_t(K * L));
    for (int64_t i = lo; i < hi; ++i)
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        const T* img = x + (i * g.c + gr * Cg) * g.h * g.w;
        const T* bmat = img;  // a 1x1 convolution with stride 1 reads the image as its columns
        if (!g.pointwise()) {
          im2col(g, Cg, img, cols.data());
          bmat = cols.data();
        }
        T* out = y + (i * g.cout + gr * M) * L;
        gemm<T>(M, L, K, w + gr * M * K, K, 1, bmat, L, 1, out, L);
        if (b)
          for (int64_t o = 0; o < M; ++o) {
            const T bo = b[gr * M + o];
            T* row = out + o * L;
            for (int64_t p = 0; p < L; ++p) row[p] += bo;
          }
      }
  });
}

template <class T>
void input_grad(const ConvGeometry& g, const T* dy, const T* w, T* dx) {
  const int64_t L = g.l(), K = g.k_g(), M = g.cout_g(), Cg = g.cin_g();
  for_image_chunks(g.n, [&](int64_t, int64_t lo, int64_t hi) {
    std::vector<T> cols(g.pointwise() ? 0 : size_t(K * L));
    for (int64_t i = lo; i < hi; ++i)
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        T* img = dx + (i * g.c + gr * Cg) * g.h * g.w;
        T* dst = g.pointwise() ? img : cols.data();
        // w_g^T (K x M, a transposed view) times dy_g (M x L).
        gemm<T>(K, L, M, w + gr * M * K, 1, K, dy + (i * g.cout + gr * M) * L, L, 1, dst, L);
        if (!g.pointwise()) {
          std::fill(img, img + Cg * g.h * g.w, T(0));
          col2im(g, Cg, cols.data(), img);
        }
      }
  });
}

template <class T>
void weight_grad(const ConvGeometry& g, const T* x, const T* dy, T* dw) {
  const int64_t L = g.l(), K = g.k_g(), M = g.cout_g(), Cg = g.cin_g();
  const int64_t wsize = g.cout * K;
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(num_threads(), g.n));
  std::vector<T> partial(size_t(chunks * wsize), T(0));
  for_image_chunks(g.n, [&](int64_t chunk, int64_t lo, int64_t hi) {
    std::vector<T> cols(g.pointwise() ? 0 : size_t(K * L)), prod(size_t(M * K));
    T* acc = partial.data() + chunk * wsize;
    for (int64_t i = lo; i < hi; ++i)
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        const T* img = x + (i * g.c + gr * Cg) * g.h * g.w;
        const T* cmat = img;
        if (!g.pointwise()) {
          im2col(g, Cg, img, cols.data());
          cmat = cols.data();
        }
        // dy_g (M x L) times cols^T (L x K, a transposed view).
        gemm<T>(M, K, L, dy + (i * g.cout + gr * M) * L, L, 1, cmat, 1, L, prod.data(), K);
        T* a = acc + gr * M * K;
        for (int64_t e = 0; e < M * K; ++e) a[e] += prod[size_t(e)];
      }
  });
  // Chunks are summed in a fixed order: the result does not depend on the thread timing.
  for (int64_t e = 0; e < wsize; ++e) {
    T s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += partial[size_t(c * wsize + e)];
    dw[e] = s;
  }
}

template <class T>
const T* ptr(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

}  // namespace

Tensor conv2d_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor xc = x.contiguous(), wc = w.contiguous(), bc = b.defined() ? b.contiguous() : Tensor();
  Tensor y = empty({g.n, g.cout, g.oh, g.ow}, x.dtype());
  if (y.numel() == 0) return y;
  if (x.dtype() == DType::Float32) forward<float>(g, ptr<float>(xc), ptr<float>(wc), ptr<float>(bc), y.data<float>());
  else forward<double>(g, ptr<double>(xc), ptr<double>(wc), ptr<double>(bc), y.data<double>());
  return y;
}

Tensor conv2d_input_grad(const ConvGeometry& g, const Tensor& dy, const Tensor& w) {
  Tensor dyc = dy.contiguous(), wc = w.contiguous();
  Tensor dx = empty({g.n, g.c, g.h, g.w}, dy.dtype());
  if (dx.numel() == 0) return dx;
  if (dy.dtype() == DType::Float32) input_grad<float>(g, ptr<float>(dyc), ptr<float>(wc), dx.data<float>());
  else input_grad<double>(g, ptr<double>(dyc), ptr<double>(wc), dx.data<double>());
  return dx;
}

Tensor conv2d_weight_grad(const ConvGeometry& g, const Tensor& x, const Tensor& dy) {
  Tensor xc = x.contiguous(), dyc = dy.contiguous();
  Tensor dw = zeros({g.cout, g.cin_g(), g.kh, g.kw}, x.dtype());
  if (dw.numel() == 0 || g.n == 0) return dw;
  if (x.dtype() == DType::Float32) weight_grad<float>(g, ptr<float>(xc), ptr<float>(dyc), dw.data<float>());
  else weight_grad<double>(g, ptr<double>(xc), ptr<double>(dyc), dw.data<double>());
  return dw;
}

}  // namespace ember::cpu

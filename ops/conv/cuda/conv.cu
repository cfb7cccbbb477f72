// CUDA conv2d and its two gradients, with the CPU kernels' contracts (ops/conv/cpu/conv_kernels.h),
// written as direct convolutions: one thread per output element sums its taps in double, in a
// fixed order, so the result needs no atomics and does not vary from run to run. This is the
// simple, obviously-correct form; an im2col + cuBLAS path would be the fast one for large layers.
#include "framework/cuda/indexing.cuh"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

#define EMBER_GRID_STRIDE(e, total) \
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < (total); e += int64_t(gridDim.x) * blockDim.x)

// y[n, co, oy, ox] = b[co] + sum over the group's channels ci and taps (i, j) of
// x[n, ci, oy sh - ph + i dh, ox sw - pw + j dw] w[co, ci, i, j] (taps in the padding read zero).
template <class T>
__global__ void conv_forward(ConvGeometry g, const T* x, const T* w, const T* b, T* y, int64_t total) {
  const int64_t cin_g = g.c / g.groups, cout_g = g.cout / g.groups;
  EMBER_GRID_STRIDE(e, total) {
    const int64_t ox = e % g.ow, oy = (e / g.ow) % g.oh, co = (e / (g.ow * g.oh)) % g.cout, n = e / (g.ow * g.oh * g.cout);
    const int64_t c0 = (co / cout_g) * cin_g;
    double acc = b ? double(b[co]) : 0.0;
    for (int64_t ci = 0; ci < cin_g; ++ci) {
      const T* xp = x + (n * g.c + c0 + ci) * g.h * g.w;
      const T* wp = w + (co * cin_g + ci) * g.kh * g.kw;
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t iy = oy * g.sh - g.ph + i * g.dh;
        if (iy < 0 || iy >= g.h) continue;
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t ix = ox * g.sw - g.pw + j * g.dw;
          if (ix < 0 || ix >= g.w) continue;
          acc += double(xp[iy * g.w + ix]) * double(wp[i * g.kw + j]);
        }
      }
    }
    y[e] = T(acc);
  }
}

// dx[n, c, iy, ix] = sum over the group's output channels co and the taps (i, j) that read
// (iy, ix) from some output (oy, ox) of dy[n, co, oy, ox] w[co, c - c0, i, j].
template <class T>
__global__ void conv_input_grad(ConvGeometry g, const T* dy, const T* w, T* dx, int64_t total) {
  const int64_t cin_g = g.c / g.groups, cout_g = g.cout / g.groups;
  EMBER_GRID_STRIDE(e, total) {
    const int64_t ix = e % g.w, iy = (e / g.w) % g.h, c = (e / (g.w * g.h)) % g.c, n = e / (g.w * g.h * g.c);
    const int64_t grp = c / cin_g, ci = c % cin_g;
    double acc = 0;
    for (int64_t co = grp * cout_g; co < (grp + 1) * cout_g; ++co) {
      const T* dyp = dy + (n * g.cout + co) * g.oh * g.ow;
      const T* wp = w + (co * cin_g + ci) * g.kh * g.kw;
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t ty = iy + g.ph - i * g.dh;  // = oy * sh for the output that reads this row
        if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t tx = ix + g.pw - j * g.dw;
          if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
          acc += double(dyp[(ty / g.sh) * g.ow + tx / g.sw]) * double(wp[i * g.kw + j]);
        }
      }
    }
    dx[e] = T(acc);
  }
}

// dw[co, ci, i, j] = sum over images and output positions of dy[n, co, oy, ox] x[n, c0 + ci, iy, ix].
template <class T>
__global__ void conv_weight_grad(ConvGeometry g, const T* x, const T* dy, T* dw, int64_t total) {
  const int64_t cin_g = g.c / g.groups, cout_g = g.cout / g.groups;
  EMBER_GRID_STRIDE(e, total) {
    const int64_t j = e % g.kw, i = (e / g.kw) % g.kh, ci = (e / (g.kw * g.kh)) % cin_g, co = e / (g.kw * g.kh * cin_g);
    const int64_t c = (co / cout_g) * cin_g + ci;
    double acc = 0;
    for (int64_t n = 0; n < g.n; ++n) {
      const T* xp = x + (n * g.c + c) * g.h * g.w;
      const T* dyp = dy + (n * g.cout + co) * g.oh * g.ow;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        const int64_t iy = oy * g.sh - g.ph + i * g.dh;
        if (iy < 0 || iy >= g.h) continue;
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const int64_t ix = ox * g.sw - g.pw + j * g.dw;
          if (ix < 0 || ix >= g.w) continue;
          acc += double(dyp[oy * g.ow + ox]) * double(xp[iy * g.w + ix]);
        }
      }
    }
    dw[e] = T(acc);
  }
}

#undef EMBER_GRID_STRIDE

void check_cuda(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.device() == Device::CUDA && b.device() == Device::CUDA, op, ": expected CUDA tensors");
  EMBER_CHECK(a.dtype() == b.dtype(), op, ": mixed dtypes ", a.dtype(), " and ", b.dtype());
}

}  // namespace

Tensor conv2d_forward(const ConvGeometry& g, const Tensor& x_in, const Tensor& w_in, const Tensor& b_in) {
  check_cuda("conv2d", x_in, w_in);
  Tensor x = x_in.contiguous(), w = w_in.contiguous(), b = b_in.defined() ? b_in.contiguous() : Tensor();
  Tensor y = empty({g.n, g.cout, g.oh, g.ow}, x.dtype(), Device::CUDA);
  const int64_t total = y.numel();
  if (total == 0) return y;
  EMBER_DISPATCH_FLOAT(x.dtype(), "conv2d", [&] {
    conv_forward<scalar_t><<<blocks_for(total), kThreads>>>(g, x.data<scalar_t>(), w.data<scalar_t>(),
                                                            b.defined() ? b.data<scalar_t>() : nullptr,
                                                            y.data<scalar_t>(), total);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return y;
}

Tensor conv2d_input_grad(const ConvGeometry& g, const Tensor& dy_in, const Tensor& w_in) {
  check_cuda("conv2d_input_grad", dy_in, w_in);
  Tensor dy = dy_in.contiguous(), w = w_in.contiguous();
  Tensor dx = empty({g.n, g.c, g.h, g.w}, dy.dtype(), Device::CUDA);
  const int64_t total = dx.numel();
  if (total == 0) return dx;
  EMBER_DISPATCH_FLOAT(dy.dtype(), "conv2d_input_grad", [&] {
    conv_input_grad<scalar_t><<<blocks_for(total), kThreads>>>(g, dy.data<scalar_t>(), w.data<scalar_t>(),
                                                               dx.data<scalar_t>(), total);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return dx;
}

Tensor conv2d_weight_grad(const ConvGeometry& g, const Tensor& x_in, const Tensor& dy_in) {
  check_cuda("conv2d_weight_grad", x_in, dy_in);
  Tensor x = x_in.contiguous(), dy = dy_in.contiguous();
  Tensor dw = empty({g.cout, g.c / g.groups, g.kh, g.kw}, x.dtype(), Device::CUDA);
  const int64_t total = dw.numel();
  if (total == 0) return dw;
  EMBER_DISPATCH_FLOAT(x.dtype(), "conv2d_weight_grad", [&] {
    conv_weight_grad<scalar_t><<<blocks_for(total), kThreads>>>(g, x.data<scalar_t>(), dy.data<scalar_t>(),
                                                                dw.data<scalar_t>(), total);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return dw;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::conv2d_forward.set(&conv2d_forward);
  cuda_kernels::conv2d_input_grad.set(&conv2d_input_grad);
  cuda_kernels::conv2d_weight_grad.set(&conv2d_weight_grad);
  return true;
}();
}  // namespace

}  // namespace ember::cuda

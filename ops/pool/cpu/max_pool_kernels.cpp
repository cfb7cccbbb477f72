#include "ops/pool/cpu/max_pool_kernels.h"

#include <cmath>
#include <limits>

#include "framework/core/parallel.h"

namespace ember::cpu {
namespace {

// As PyTorch: strictly greater keeps the first maximum, and a NaN wins (the last one). On real
// data which tap wins is unpredictable, so no branch: the index moves by a mask and the maximum
// is reloaded from it (GCC turns a ?: select of the value back into a jump).
template <class T>
inline void consider(const T* plane, int64_t i, T& best, int64_t& at) {
  const T v = plane[i];
  const int64_t mask = -int64_t((v > best) | (v != v));
  at ^= (at ^ i) & mask;
  best = plane[at];
}

template <class T>
void forward(const PoolGeometry& g, const T* x, T* y, int64_t* idx) {
  const int64_t planes = g.n * g.c, hw = g.h * g.w, ohw = g.oh * g.ow;
  // Without padding every window lies inside the image (floor mode): no bounds checks.
  const bool inside = g.ph == 0 && g.pw == 0;
  const bool pool2x2 = g.kh == 2 && g.kw == 2 && g.dh == 1 && g.dw == 1;
  parallel_for(planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, ohw * g.kh * g.kw)), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* plane = x + p * hw;
      T* yp = y + p * ohw;
      int64_t* ip = idx + p * ohw;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        const int64_t y0 = oy * g.sh - g.ph;
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const int64_t x0 = ox * g.sw - g.pw;
          T best = -std::numeric_limits<T>::infinity();
          int64_t at = -1;
          if (inside && pool2x2) {  // the CNN's pool, unrolled
            at = y0 * g.w + x0;
            best = plane[at];
            consider(plane, at + 1, best, at);
            consider(plane, y0 * g.w + x0 + g.w, best, at);
            consider(plane, y0 * g.w + x0 + g.w + 1, best, at);
          } else if (inside) {
            at = y0 * g.w + x0;
            best = plane[at];
            for (int64_t ki = 0; ki < g.kh; ++ki) {
              const int64_t row = (y0 + ki * g.dh) * g.w + x0;
              for (int64_t kj = 0; kj < g.kw; ++kj) consider(plane, row + kj * g.dw, best, at);
            }
          } else {
            for (int64_t ki = 0; ki < g.kh; ++ki) {
              const int64_t iy = y0 + ki * g.dh;
              if (iy < 0 || iy >= g.h) continue;
              for (int64_t kj = 0; kj < g.kw; ++kj) {
                const int64_t ix = x0 + kj * g.dw;
                if (ix < 0 || ix >= g.w) continue;
                // The first tap inside the image starts the search, so that an all -inf window
                // still names an element.
                if (at < 0) best = plane[iy * g.w + ix], at = iy * g.w + ix;
                consider(plane, iy * g.w + ix, best, at);
              }
            }
          }
          yp[oy * g.ow + ox] = best;
          ip[oy * g.ow + ox] = p * hw + at;
        }
      }
    }
  });
}

template <class T>
void scatter(const PoolGeometry& g, const T* dy, const int64_t* idx, T* dx) {
  const int64_t planes = g.n * g.c, hw = g.h * g.w, ohw = g.oh * g.ow;
  // Each plane's indices stay in that plane: threads own whole planes, so no two write one element.
  parallel_for(planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, ohw)), [&](int64_t p0, int64_t p1) {
    std::fill(dx + p0 * hw, dx + p1 * hw, T(0));
    for (int64_t i = p0 * ohw; i < p1 * ohw; ++i) dx[idx[i]] += dy[i];
  });
}

}  // namespace

Tensor max_pool2d(const PoolGeometry& g, const Tensor& x, Tensor* indices) {
  Tensor xc = x.contiguous();
  Tensor y = empty({g.n, g.c, g.oh, g.ow}, x.dtype());
  *indices = empty({g.n, g.c, g.oh, g.ow}, DType::Int64);
  if (y.numel() == 0) return y;
  if (x.dtype() == DType::Float32) forward<float>(g, xc.data<float>(), y.data<float>(), indices->data<int64_t>());
  else forward<double>(g, xc.data<double>(), y.data<double>(), indices->data<int64_t>());
  return y;
}

Tensor max_pool2d_scatter(const PoolGeometry& g, const Tensor& dy, const Tensor& indices) {
  Tensor dyc = dy.contiguous(), ic = indices.contiguous();
  Tensor dx = empty({g.n, g.c, g.h, g.w}, dy.dtype());
  if (dx.numel() == 0) return dx;
  if (dy.dtype() == DType::Float32) scatter<float>(g, dyc.data<float>(), ic.data<int64_t>(), dx.data<float>());
  else scatter<double>(g, dyc.data<double>(), ic.data<int64_t>(), dx.data<double>());
  return dx;
}

}  // namespace ember::cpu

// Unfolding an image into GEMM columns and folding columns back. For one image of c channels,
// column matrix row (ci * kh + ki) * kw + kj, column oh * ow_count + ow holds the input pixel that
// kernel tap (ki, kj) of channel ci sees at output position (oh, ow), or 0 in the padding.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/conv/conv_geometry.h"

namespace ember::cpu {

// The output columns [lo, hi) of one row of taps whose input coordinate lies inside [0, size):
// in = o * stride + offset for o in [lo, hi).
inline void valid_range(int64_t count, int64_t stride, int64_t offset, int64_t size, int64_t& lo, int64_t& hi) {
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  hi = offset >= size ? 0 : std::min<int64_t>(count, (size - 1 - offset) / stride + 1);
  if (hi < lo) hi = lo;
}

// img: cin channels of h x w (contiguous); cols: (cin * kh * kw) x (oh * ow).
template <class T>
void im2col(const ConvGeometry& g, int64_t cin, const T* img, T* cols) {
  const int64_t L = g.l();
  for (int64_t ci = 0; ci < cin; ++ci)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        T* row = cols + ((ci * g.kh + ki) * g.kw + kj) * L;
        const T* plane = img + ci * g.h * g.w;
        int64_t x0, x1;
        valid_range(g.ow, g.sw, kj * g.dw - g.pw, g.w, x0, x1);
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          T* dst = row + oy * g.ow;
          const int64_t iy = oy * g.sh - g.ph + ki * g.dh;
          if (iy < 0 || iy >= g.h) {
            std::fill(dst, dst + g.ow, T(0));
            continue;
          }
          const T* src = plane + iy * g.w + kj * g.dw - g.pw;
          std::fill(dst, dst + x0, T(0));
          if (g.sw == 1) std::memcpy(dst + x0, src + x0, size_t(x1 - x0) * sizeof(T));
          else
            for (int64_t ox = x0; ox < x1; ++ox) dst[ox] = src[ox * g.sw];
          std::fill(dst + x1, dst + g.ow, T(0));
        }
      }
}

// The transpose of im2col: img[ci, iy, ix] += every column entry that im2col copied from it.
// img must be zeroed (or hold what the sum starts from) by the caller.
template <class T>
void col2im(const ConvGeometry& g, int64_t cin, const T* cols, T* img) {
  const int64_t L = g.l();
  for (int64_t ci = 0; ci < cin; ++ci)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const T* row = cols + ((ci * g.kh + ki) * g.kw + kj) * L;
        T* plane = img + ci * g.h * g.w;
        int64_t x0, x1;
        valid_range(g.ow, g.sw, kj * g.dw - g.pw, g.w, x0, x1);
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t iy = oy * g.sh - g.ph + ki * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          const T* src = row + oy * g.ow;
          T* dst = plane + iy * g.w + kj * g.dw - g.pw;
          if (g.sw == 1)
            for (int64_t ox = x0; ox < x1; ++ox) dst[ox] += src[ox];
          else
            for (int64_t ox = x0; ox < x1; ++ox) dst[ox * g.sw] += src[ox];
        }
      }
}

}  // namespace ember::cpu

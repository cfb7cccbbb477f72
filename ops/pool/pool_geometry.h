// The sizes of one 2-D pooling (NCHW, floor mode), derived once in ops/pool/pool.cpp and shared by
// the CPU and CUDA kernels.
#pragma once
#include <cstdint>

namespace ember {

struct PoolGeometry {
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
};

}  // namespace ember

// The sizes of one 2-D convolution, derived once from the input and weight shapes and the
// options, and shared by the checks, the kernels and the gradient ops.
#pragma once
#include <string>

#include "ops/conv/conv.h"

namespace ember {

struct ConvGeometry {
  int64_t n, c, h, w;       // input
  int64_t cout, kh, kw;     // weight (cout, c / groups, kh, kw)
  int64_t oh, ow;           // output
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t cin_g() const { return c / groups; }
  int64_t cout_g() const { return cout / groups; }
  int64_t k_g() const { return cin_g() * kh * kw; }  // GEMM depth per group
  int64_t l() const { return oh * ow; }             // output positions per image
  bool pointwise() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
};

// Checks the shapes and options (ember::Error naming `op` and the shapes) and returns the sizes.
ConvGeometry conv_geometry(const char* op, const Shape& x, const Shape& weight, const Conv2dOptions& opt);

}  // namespace ember

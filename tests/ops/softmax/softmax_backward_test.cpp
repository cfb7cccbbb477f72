// The fused backward kernels of softmax and log_softmax (cpu/softmax_kernels.h) against float64
// row-by-row references, on every layout and dim, in float64 and float32; and the op-level
// gradients that use them against the Ember-op form they replace.
#include <cmath>
#include <functional>

#include "framework/core/autograd/autograd.h"
#include "ops/reference.h"
#include "ops/softmax/cpu/softmax_kernels.h"
#include "ops/softmax/softmax.h"

using namespace ember;
using namespace ember::testing;

namespace {

// A strided view of shape s; rows of one element cannot be strided, so those come transposed.
Tensor strided_or_transposed(const Shape& s, uint64_t seed) {
  return s.back() > 1 ? strided_random(s, seed) : transposed_random(s, seed);
}

// (y, g) pairs of one shape in several layouts: contiguous, transposed and strided views.
std::vector<std::pair<Tensor, Tensor>> layouts(const Shape& s, uint64_t seed) {
  return {{random(s, seed), random(s, seed + 1)},
          {transposed_random(s, seed + 2), random(s, seed + 3)},
          {strided_or_transposed(s, seed + 4), transposed_random(s, seed + 5)}};
}

// Applies `rule(y_row, g_row, out_row, n)` row by row in float64, over contiguous copies of y and
// g with `dim` moved last.
Tensor ref_rows(const Tensor& y, const Tensor& g, int64_t dim,
                const std::function<void(const double*, const double*, double*, size_t)>& rule) {
  Tensor yt = y.transpose(dim, -1).contiguous().to(DType::Float64), gt = g.transpose(dim, -1).contiguous().to(DType::Float64);
  std::vector<double> yv = yt.to_vector<double>(), gv = gt.to_vector<double>(), out(yv.size());
  const size_t n = size_t(y.size(dim));
  for (size_t r = 0; r < yv.size() / n; ++r) rule(&yv[r * n], &gv[r * n], &out[r * n], n);
  return from_vector(out, yt.shape()).transpose(dim, -1).contiguous();
}

Tensor ref_softmax_backward(const Tensor& y, const Tensor& g, int64_t dim) {
  return ref_rows(y, g, dim, [](const double* yr, const double* gr, double* out, size_t n) {
    double s = 0;
    for (size_t k = 0; k < n; ++k) s += gr[k] * yr[k];
    for (size_t k = 0; k < n; ++k) out[k] = yr[k] * (gr[k] - s);
  });
}

Tensor ref_log_softmax_backward(const Tensor& y, const Tensor& g, int64_t dim) {
  return ref_rows(y, g, dim, [](const double* yr, const double* gr, double* out, size_t n) {
    double s = 0;
    for (size_t k = 0; k < n; ++k) s += gr[k];
    for (size_t k = 0; k < n; ++k) out[k] = gr[k] - std::exp(yr[k]) * s;
  });
}

}  // namespace

TEST(SoftmaxBackward, FusedKernelsMatchFloat64References) {
  uint64_t seed = 10;
  for (Shape s : {Shape{1, 1}, Shape{3, 7}, Shape{2, 5, 33}, Shape{4, 1000}})
    for (int64_t dim : {int64_t(0), int64_t(s.size()) - 1})
      for (auto& [x, g] : layouts(s, seed += 10)) {
        SCOPED_TRACE(str("shape ", to_string(s), " dim ", dim, " strides ", to_string(x.strides())));
        Tensor y = softmax(x, dim), ly = log_softmax(x, dim);
        EXPECT_TRUE(all_close(cpu::softmax_backward(y, g, dim), ref_softmax_backward(y, g, dim), 1e-14, 1e-12));
        EXPECT_TRUE(all_close(cpu::log_softmax_backward(ly, g, dim), ref_log_softmax_backward(ly, g, dim), 1e-13, 1e-12));
        Tensor yf = y.to(DType::Float32), lyf = ly.to(DType::Float32), gf = g.to(DType::Float32);
        EXPECT_TRUE(all_close(cpu::softmax_backward(yf, gf, dim).to(DType::Float64),
                              ref_softmax_backward(yf, gf, dim), 1e-6, 1e-5));
        EXPECT_TRUE(all_close(cpu::log_softmax_backward(lyf, gf, dim).to(DType::Float64),
                              ref_log_softmax_backward(lyf, gf, dim), 1e-5, 1e-5));
      }
}

TEST(SoftmaxBackward, OpGradientsEqualTheEmberOpForm) {
  // First-order gradients run the fused kernels; the Ember-op form written out here must agree.
  Tensor x = random({6, 50}, 3), w = random({6, 50}, 4);
  Tensor gs = grad([&](const Tensor& v) { return sum(softmax(v, -1) * w); })(x);
  Tensor y = softmax(x, -1);
  EXPECT_TRUE(all_close(gs, y * (w - sum(w * y, {-1}, true)), 1e-14, 1e-12));
  Tensor gl = grad([&](const Tensor& v) { return sum(log_softmax(v, 0) * w); })(x);
  EXPECT_TRUE(all_close(gl, w - exp(log_softmax(x, 0)) * sum(w, {0}, true), 1e-14, 1e-12));
}

TEST(SoftmaxBackward, MismatchedGradientRaises) {
  Tensor y = random({3, 4}, 1);
  EXPECT_THROW(cpu::softmax_backward(y, random({4, 3}, 2), 1), Error);
  EXPECT_THROW(cpu::log_softmax_backward(y, random({3, 4}, 2).to(DType::Float32), 1), Error);
}

// The fused layer_norm backward kernels (cpu/layer_norm_kernels.h) against float64 references from
// the definition, with and without a weight, on strided inputs and gradients, in float64 and
// float32; and the op-level gradients that use them against the Ember-op form.
#include <cmath>

#include "framework/core/autograd/autograd.h"
#include "ops/norm/cpu/layer_norm_kernels.h"
#include "ops/norm/layer_norm.h"
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

// A strided view of shape s; rows of one element cannot be strided, so those come transposed.
Tensor strided_or_transposed(const Shape& s, uint64_t seed) {
  return s.back() > 1 ? strided_random(s, seed) : transposed_random(s, seed);
}

struct Ref {
  Tensor dx, dw;
};

// dx and dweight from the definition, row by row in float64.
Ref reference(const Tensor& x, const Tensor& w, const Tensor& g, double eps) {
  const int64_t n = x.size(-1), rows = x.numel() / n;
  std::vector<double> xv = x.contiguous().to_vector<double>(), gv = g.contiguous().to_vector<double>();
  std::vector<double> wv = w.defined() ? w.to_vector<double>() : std::vector<double>(size_t(n), 1.0);
  std::vector<double> dx(xv.size()), dw(size_t(n), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = xv.data() + r * n;
    const double* gr = gv.data() + r * n;
    double m = 0, var = 0;
    for (int64_t k = 0; k < n; ++k) m += xr[k];
    m /= double(n);
    for (int64_t k = 0; k < n; ++k) var += (xr[k] - m) * (xr[k] - m);
    const double rs = 1 / std::sqrt(var / double(n) + eps);
    double a = 0, c = 0;
    for (int64_t k = 0; k < n; ++k) {
      a += gr[k] * wv[size_t(k)];
      c += gr[k] * wv[size_t(k)] * (xr[k] - m) * rs;
    }
    a /= double(n);
    c /= double(n);
    for (int64_t k = 0; k < n; ++k) {
      const double xhat = (xr[k] - m) * rs;
      dx[size_t(r * n + k)] = rs * (gr[k] * wv[size_t(k)] - a - xhat * c);
      dw[size_t(k)] += gr[k] * xhat;
    }
  }
  return {from_vector(dx, x.shape()), from_vector(dw, {n})};
}

}  // namespace

TEST(LayerNormBackward, FusedKernelsMatchFloat64References) {
  const double eps = 1e-5;
  uint64_t seed = 40;
  for (Shape s : {Shape{1, 1}, Shape{3, 7}, Shape{2, 5, 33}, Shape{300, 64}})
    for (int layout = 0; layout < 3; ++layout)
      for (bool with_weight : {true, false}) {
        seed += 10;
        Tensor x = layout == 0 ? random(s, seed) : layout == 1 ? transposed_random(s, seed) : strided_or_transposed(s, seed);
        Tensor g = layout == 2 ? transposed_random(s, seed + 1) : strided_or_transposed(s, seed + 1);
        Tensor w = !with_weight ? Tensor() : s.back() > 1 ? strided_random({s.back()}, seed + 2) : random({1}, seed + 2);
        SCOPED_TRACE(str("shape ", to_string(s), " layout ", layout, " weight ", with_weight));
        Ref want = reference(x, w, g, eps);
        for (DType dt : {DType::Float64, DType::Float32}) {
          Tensor xd = x.to(dt), gd = g.to(dt), wd = w.defined() ? w.to(dt) : Tensor(), mean, rstd;
          cpu::layer_norm(xd, wd, Tensor(), eps, &mean, &rstd);
          double tol = dt == DType::Float64 ? 1e-11 : 2e-4;
          EXPECT_TRUE(all_close(cpu::layer_norm_backward_input(xd, mean, rstd, wd, gd).to(DType::Float64), want.dx, tol, tol));
          EXPECT_TRUE(all_close(cpu::layer_norm_backward_weight(xd, mean, rstd, gd).to(DType::Float64), want.dw, tol, tol));
        }
      }
}

TEST(LayerNormBackward, OpGradientsEqualTheEmberOpForm) {
  Tensor x = random({5, 3, 40}, 7), w = random({40}, 8), b = random({40}, 9), u = random({5, 3, 40}, 10);
  std::vector<Tensor> gs =
      value_and_grads([&](const std::vector<Tensor>& v) { return sum(layer_norm(v[0], v[1], v[2], 1e-5) * u); })({x, w, b})
          .second;
  Tensor xc = x - mean(x, {-1}, true);
  Tensor rstd = 1.0 / sqrt(mean(xc * xc, {-1}, true) + 1e-5), xhat = xc * rstd, gw = u * w;
  EXPECT_TRUE(all_close(gs[0], rstd * (gw - mean(gw, {-1}, true) - xhat * mean(gw * xhat, {-1}, true)), 1e-12, 1e-10));
  EXPECT_TRUE(all_close(gs[1], sum(u * xhat, {0, 1}), 1e-12, 1e-10));
  EXPECT_TRUE(all_close(gs[2], sum(u, {0, 1}), 1e-12, 1e-10));
}

TEST(LayerNormBackward, BadStatisticsRaise) {
  Tensor x = random({3, 4}, 1), g = random({3, 4}, 2), mean, rstd;
  cpu::layer_norm(x, Tensor(), Tensor(), 1e-5, &mean, &rstd);
  EXPECT_THROW(cpu::layer_norm_backward_input(x, mean.reshape({3}), rstd, Tensor(), g), Error);
  EXPECT_THROW(cpu::layer_norm_backward_weight(x, mean, rstd, random({4, 3}, 3)), Error);
}

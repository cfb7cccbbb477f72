// layer_norm: checks, dispatch, and the VJP/JVP. With xhat = (x - mean) * rstd and gw = g * weight,
//   dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)),  dweight = sum(g * xhat),  dbias = sum(g)
// (means over the last dim, sums over every other). The rules are written with Ember ops; when x is
// itself traced one level down (grad of grad), mean and rstd are recomputed with Ember ops too so
// that their dependence on x is differentiated; otherwise the kernel's row statistics are reused,
// and first-order gradients on the CPU run the same formulas as fused kernels (cpu/layer_norm_kernels.h).
#include "ops/norm/layer_norm.h"

#include <memory>
#include <optional>

#include "framework/autograd/trace.h"
#include "ops/elementwise/elementwise.h"
#include "ops/norm/cpu/layer_norm_kernels.h"
#include "ops/reduce/reduce.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
// ops/norm/cuda/layer_norm.cu; same contract as cpu::layer_norm (mean / rstd may be null).
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, Tensor* mean, Tensor* rstd);
}  // namespace cuda
#endif

namespace {

void check_args(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  EMBER_CHECK(x.defined(), "layer_norm: input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), "layer_norm: expected a float32 or float64 input, got ", x.dtype(),
              to_string(x.shape()));
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) > 0, "layer_norm: the input needs a non-empty last dim to normalise, got shape ",
              to_string(x.shape()));
  EMBER_CHECK(eps >= 0, "layer_norm: eps must be >= 0, got ", eps);
  const Shape d = {x.size(-1)};
  for (const auto& [p, what] : {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}}) {
    if (!p->defined()) continue;
    EMBER_CHECK(p->shape() == d, "layer_norm: ", what, " has shape ", to_string(p->shape()), " but the input ",
                to_string(x.shape()), " needs ", to_string(d));
    EMBER_CHECK(p->dtype() == x.dtype(), "layer_norm: ", what, " is ", p->dtype(), " but the input is ", x.dtype());
    EMBER_CHECK(p->device() == x.device(), "layer_norm: ", what, " is on ", p->device(), " but the input is on ",
                x.device());
  }
}

Tensor layer_norm_kernel(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean, Tensor* rstd) {
#ifdef EMBER_CUDA
  if (x.device() == Device::CUDA) return cuda::layer_norm(x, w, b, eps, mean, rstd);
#endif
  check_cpu(x, "layer_norm");
  return cpu::layer_norm(x, w, b, eps, mean, rstd);
}

struct Normalised {
  Tensor xhat, rstd;
};

// xhat and rstd as Ember ops of x, differentiable in x.
Normalised normalise(const Tensor& x, double eps) {
  Tensor xc = x - mean(x, {-1}, true);
  Tensor rstd = 1.0 / sqrt(mean(xc * xc, {-1}, true) + eps);
  return {xc * rstd, rstd};
}

// rstd * (v - mean(v) - xhat * mean(v * xhat)): the Jacobian of xhat, symmetric, used both ways.
Tensor xhat_jacobian_times(const Normalised& n, const Tensor& v) {
  return n.rstd * (v - mean(v, {-1}, true) - n.xhat * mean(v * n.xhat, {-1}, true));
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  check_args(x, weight, bias, eps);
  Tensor saved_mean, saved_rstd;  // filled when the kernel runs directly below this trace level
  auto stats = [&](const autograd::Args& a) {
    if (saved_mean.defined()) return Normalised{(a[0] - saved_mean) * saved_rstd, saved_rstd};
    return normalise(a[0], eps);
  };
  auto r = autograd::record(
      "layer_norm", {x, weight, bias},
      [&](const autograd::Args& a) {
        if (autograd::detail::top_trace(a) == 0 && autograd::grad_enabled())
          return layer_norm_kernel(a[0], a[1], a[2], eps, &saved_mean, &saved_rstd);
        return layer_norm(a[0], a[1], a[2], eps);
      },
      [&](const Tensor&, const autograd::Args& a) -> autograd::VjpFn {
        // xhat is formed (once, shared by the three inputs' rules) only when the Ember-op form
        // runs: on the GPU, or when the gradient is differentiated again. First-order CPU
        // gradients take the fused kernels from the saved statistics instead.
        auto composite = std::make_shared<std::optional<Normalised>>();
        return [x = a[0], w = a[1], mean = saved_mean, rstd = saved_rstd, eps, composite](const Tensor& g, int i) {
          const Shape d = {x.size(-1)};
          if (mean.defined() && x.device() == Device::CPU && g.device() == Device::CPU && g.shape() == x.shape() &&
              g.dtype() == x.dtype() && !autograd::any_traced({&x, &w, &g})) {
            if (i == 0) return cpu::layer_norm_backward_input(x, mean, rstd, w, g);
            if (i == 1) return cpu::layer_norm_backward_weight(x, mean, rstd, g);
            return sum_to(g, d);
          }
          if (!*composite) *composite = mean.defined() ? Normalised{(x - mean) * rstd, rstd} : normalise(x, eps);
          const Normalised& n = **composite;
          if (i == 0) return xhat_jacobian_times(n, w.defined() ? g * w : g);
          if (i == 1) return sum_to(g * n.xhat, d);
          return sum_to(g, d);
        };
      },
      [&](const autograd::Args& t, const Tensor& y, const autograd::Args& a) {
        Normalised n = stats(a);
        Tensor out;
        auto add_term = [&](const Tensor& v) { out = out.defined() ? out + v : v; };
        if (t[0].defined()) {
          Tensor dxhat = xhat_jacobian_times(n, t[0]);
          add_term(a[1].defined() ? dxhat * a[1] : dxhat);
        }
        if (t[1].defined()) add_term(n.xhat * t[1]);
        if (t[2].defined()) add_term(t[2]);
        return out.shape() == y.shape() ? out : out.expand(y.shape());
      });
  return r ? *r : layer_norm_kernel(x, weight, bias, eps, nullptr, nullptr);
}

}  // namespace ember

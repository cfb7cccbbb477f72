// layer_norm: checks, dispatch, and the VJP/JVP. With xhat = (x - mean) * rstd and gw = g * weight,
//   dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)),  dweight = sum(g * xhat),  dbias = sum(g)
// (means over the last dim, sums over every other). The kernel saves its row statistics (mean, rstd)
// as extras. The rules are written with Ember ops; when x is itself traced one level down (grad of
// grad), mean and rstd are recomputed with Ember ops so that their dependence on x is
// differentiated; otherwise the saved statistics are reused, and first-order gradients on the CPU
// run the same formulas as fused kernels (cpu/layer_norm_kernels.h).
#include "ops/norm/layer_norm.h"

#include <memory>
#include <optional>

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/elementwise/elementwise.h"
#include "ops/norm/cpu/layer_norm_kernels.h"
#include "ops/reduce/reduce.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {

void check_args(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  EMBER_CHECK(x.defined(), "layer_norm: input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), "layer_norm: expected a floating input (float32, float64, bfloat16, float16), got ", x.dtype(),
              to_string(x.shape()));
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) > 0, "layer_norm: the input needs a non-empty last dim to normalise, got shape ",
              to_string(x.shape()));
  EMBER_CHECK(eps >= 0, "layer_norm: eps must be >= 0, got ", eps);
  const Shape d = {x.size(-1)};
  for (const auto& [p, what] : {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}}) {
    if (!p->defined()) continue;
    EMBER_CHECK(p->shape() == d, "layer_norm: ", what, " has shape ", to_string(p->shape()), " but the input ",
                to_string(x.shape()), " needs ", to_string(d));
    // Under autocast the engine casts a half input and its parameters to float32 (ops/autocast).
    EMBER_CHECK(p->dtype() == x.dtype() || autocast::detail::active(), "layer_norm: ", what, " is ", p->dtype(), " but the input is ", x.dtype());
    EMBER_CHECK(p->device() == x.device(), "layer_norm: ", what, " is on ", p->device(), " but the input is on ",
                x.device());
  }
}

Tensor layer_norm_kernel(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean, Tensor* rstd) {
  if (x.device() == Device::CUDA) return cuda_kernels::layer_norm(x, w, b, eps, mean, rstd);
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

struct LayerNormAttrs {
  double eps;
};
using LayerNormCall = OpCall<LayerNormAttrs>;

// The statistics are extras only a backward pass reads: an unrecorded call skips them.
KernelOut kernel(const Args& a, const LayerNormAttrs& at) {
  if (!extras_wanted()) return layer_norm_kernel(a[0], a[1], a[2], at.eps, nullptr, nullptr);
  Tensor mean, rstd;
  Tensor y = layer_norm_kernel(a[0], a[1], a[2], at.eps, &mean, &rstd);
  return {y, {mean, rstd}};
}

// xhat and rstd for the rules: from the saved statistics, or as Ember ops of x when x is traced.
Normalised stats(const LayerNormCall& c) {
  const Tensor& x = c.in[0];
  if (x.is_traced()) return normalise(x, c.attrs.eps);
  // A 16-bit input's statistics are float32; the rules run in the input's dtype.
  Tensor mu = cast(c.extras[0], x.dtype()), rstd = cast(c.extras[1], x.dtype());
  return Normalised{(x - mu) * rstd, rstd};
}

const Primitive<LayerNormAttrs>& layer_norm_op() {
  static const Primitive<LayerNormAttrs> p =
      Primitive<LayerNormAttrs>("layer_norm")
          .all_devices(kernel)
          .dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16})
          .saves({0, 1}, false)
          .vjp([](const Tensor& g, const LayerNormCall& c) {
            const Tensor &x = c.in[0], &w = c.in[1];
            const Shape d = {x.size(-1)};
            Normalised n = stats(c);
            Grads out(3);
            if (c.needs(0)) out[0] = xhat_jacobian_times(n, w.defined() ? g * w : g);
            if (c.needs(1)) out[1] = sum_to(g * n.xhat, d);
            if (c.needs(2)) out[2] = sum_to(g, d);
            return out;
          })
          .fused_vjp(Device::CPU,
                     [](const Tensor& g, const LayerNormCall& c) {
                       const Tensor &x = c.in[0], &w = c.in[1], &mean = c.extras[0], &rstd = c.extras[1];
                       Grads out(3);
                       if (c.needs(0)) out[0] = cpu::layer_norm_backward_input(x, mean, rstd, w, g);
                       if (c.needs(1)) out[1] = cpu::layer_norm_backward_weight(x, mean, rstd, g);
                       if (c.needs(2)) out[2] = sum_to(g, {x.size(-1)});
                       return out;
                     })
          .jvp([](const Args& t, const LayerNormCall& c) {
            Normalised n = stats(c);
            Tensor out;
            auto add_term = [&](const Tensor& v) { out = out.defined() ? out + v : v; };
            if (t[0].defined()) {
              Tensor dxhat = xhat_jacobian_times(n, t[0]);
              add_term(c.in[1].defined() ? dxhat * c.in[1] : dxhat);
            }
            if (t[1].defined()) add_term(n.xhat * t[1]);
            if (t[2].defined()) add_term(t[2]);
            return out.shape() == c.out.shape() ? out : out.expand(c.out.shape());
          });
  return p;
}

}  // namespace

void declare_norm_ops() { layer_norm_op(); }

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  check_args(x, weight, bias, eps);
  return layer_norm_op()({x, weight, bias}, LayerNormAttrs{eps});
}

}  // namespace ember

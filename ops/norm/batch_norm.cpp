// batch_norm: training mode is a primitive (one pass for the statistics and the output, which it
// returns as extras for the running averages and the backward); inference mode is an affine map
// of Ember ops with the running statistics as constants.
//
// The training VJP, with R the dims other than 1, xhat = (x - mean) * rstd and gw = g * weight:
//   dx = rstd * (gw - mean_R(gw) - xhat * mean_R(gw * xhat)),  dweight = sum_R(g * xhat),  dbias = sum_R(g).
// As in layer_norm, when x is traced one level down the statistics are recomputed with Ember ops so
// that their dependence on x is differentiated; first-order CPU gradients use the fused kernel.
#include "ops/norm/batch_norm.h"

#include "framework/core/autograd/primitive.h"
#include "framework/core/autograd/trace.h"
#include "ops/elementwise/elementwise.h"
#include "ops/norm/cpu/batch_norm_kernels.h"
#include "ops/cuda_kernels.h"
#include "ops/op_list.h"
#include "ops/reduce/reduce.h"

namespace ember {
namespace {

struct BatchNormAttrs {
  double eps;
};
using BatchNormCall = OpCall<BatchNormAttrs>;

Shape reduce_dims(int64_t dim) {
  Shape r = {0};
  for (int64_t d = 2; d < dim; ++d) r.push_back(d);
  return r;
}
Shape channel_shape(const Tensor& x) {  // (1, C, 1, ...): broadcasts a per-channel value against x
  Shape s(size_t(x.dim()), 1);
  s[1] = x.size(1);
  return s;
}

const Primitive<BatchNormAttrs>& batch_norm_op() {
  static const Primitive<BatchNormAttrs> p =
      Primitive<BatchNormAttrs>("batch_norm")
          .cpu([](const Args& a, const BatchNormAttrs& at) {
            check_cpu(a[0], "batch_norm");
            Tensor mean, rstd, var;
            Tensor y = cpu::batch_norm_train(a[0], a[1], a[2], at.eps, &mean, &rstd, &var);
            return KernelOut(y, {mean, rstd, var});
          })
          .cuda([](const Args& a, const BatchNormAttrs& at) {
            Tensor mean, rstd, var;
            Tensor y = cuda_kernels::batch_norm_train(a[0], a[1], a[2], at.eps, &mean, &rstd, &var);
            return KernelOut(y, {mean, rstd, var});
          })
          .saves({0, 1}, false)
          .vjp([](const Tensor& g, const BatchNormCall& c) {
            const Tensor &x = c.in[0], &w = c.in[1];
            const Shape r = reduce_dims(x.dim()), cs = channel_shape(x);
            Tensor xhat, rstd;
            if (x.is_traced()) {
              Tensor xc = x - mean(x, r, true);
              rstd = 1.0 / sqrt(mean(xc * xc, r, true) + c.attrs.eps);
              xhat = xc * rstd;
            } else {
              rstd = c.extras[1].reshape(cs);
              xhat = (x - c.extras[0].reshape(cs)) * rstd;
            }
            Grads out(3);
            if (c.needs(0)) {
              Tensor gw = w.defined() ? g * w.reshape(cs) : g;
              out[0] = rstd * (gw - mean(gw, r, true) - xhat * mean(gw * xhat, r, true));
            }
            if (c.needs(1)) out[1] = sum(g * xhat, r);
            if (c.needs(2)) out[2] = sum(g, r);
            return out;
          })
          .fused_vjp(Device::CPU, [](const Tensor& g, const BatchNormCall& c) {
            cpu::BatchNormGrads r =
                cpu::batch_norm_backward(c.in[0], c.extras[0], c.extras[1], c.in[1], g, c.needs(0), c.needs(1), c.needs(2));
            return Grads{r.dx, r.dweight, r.dbias};
          });
  return p;
}

void check_channel_tensor(const char* what, const Tensor& t, const Tensor& x) {
  if (!t.defined()) return;
  EMBER_CHECK(t.shape() == Shape{x.size(1)}, "batch_norm: ", what, " has shape ", to_string(t.shape()), " but the input ",
              to_string(x.shape()), " needs ", to_string(Shape{x.size(1)}));
  EMBER_CHECK(t.dtype() == x.dtype(), "batch_norm: ", what, " is ", t.dtype(), " but the input is ", x.dtype());
  EMBER_CHECK(t.device() == x.device(), "batch_norm: ", what, " is on ", t.device(), " but the input is on ", x.device());
}

}  // namespace

void declare_batch_norm_ops() { batch_norm_op(); }

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  EMBER_CHECK(x.defined(), "batch_norm: input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), "batch_norm: expected a float32 or float64 input, got ", x.dtype(), " ",
              to_string(x.shape()));
  EMBER_CHECK(x.dim() >= 2, "batch_norm: expected an input (N, C, ...) of at least 2 dims, got shape ", to_string(x.shape()));
  EMBER_CHECK(eps >= 0, "batch_norm: eps must be >= 0, got ", eps);
  EMBER_CHECK(momentum >= 0 && momentum <= 1, "batch_norm: momentum must be in [0, 1], got ", momentum);
  check_channel_tensor("weight", weight, x);
  check_channel_tensor("bias", bias, x);
  check_channel_tensor("running_mean", running_mean, x);
  check_channel_tensor("running_var", running_var, x);
  EMBER_CHECK(running_mean.defined() == running_var.defined(),
              "batch_norm: running_mean and running_var must be given together");
  for (const Tensor* r : {&running_mean, &running_var})
    EMBER_CHECK(!r->defined() || (!r->is_traced() && !r->requires_grad()),
                "batch_norm: the running statistics are buffers updated in place; they must not require gradients");
  const Shape cs = channel_shape(x);
  if (!training) {
    EMBER_CHECK(running_mean.defined(), "batch_norm: inference mode needs running_mean and running_var for input ",
                to_string(x.shape()));
    Tensor scale = 1.0 / sqrt(running_var.reshape(cs) + eps);
    Tensor y = (x - running_mean.reshape(cs)) * scale;
    if (weight.defined()) y = y * weight.reshape(cs);
    if (bias.defined()) y = y + bias.reshape(cs);
    return y;
  }
  const int64_t count = x.numel() / x.size(1);
  EMBER_CHECK(x.size(1) > 0 && count > 1, "batch_norm: training needs more than one value per channel, got input shape ",
              to_string(x.shape()));
  KernelOut r = batch_norm_op().apply({x, weight, bias}, {eps});
  if (running_mean.defined()) {
    autograd::NoGradGuard no_grad;
    const double unbias = double(count) / double(count - 1);
    Tensor m = r.extras[0], v = r.extras[2];
    Tensor new_mean = running_mean * (1.0 - momentum) + m * momentum;
    Tensor new_var = running_var * (1.0 - momentum) + v * (momentum * unbias);
    Tensor rm = running_mean, rv = running_var;
    rm.copy_(new_mean);
    rv.copy_(new_var);
  }
  return r.out;
}

}  // namespace ember

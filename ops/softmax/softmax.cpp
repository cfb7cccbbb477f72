// softmax, log_softmax and logsumexp: checks, dispatch to the fused row kernels, and the VJP/JVP
// rules, written with Ember ops on the saved output so that they differentiate again (first-order
// gradients on the CPU take the fused kernels in cpu/softmax_kernels.h instead, same formulas):
//   softmax:     dx = y * (g - sum(g * y))        (the same form maps tangents forward)
//   log_softmax: dx = g - exp(y) * sum(g)         t_y = t - sum(exp(y) * t)
//   logsumexp:   dx = g * softmax(x)              t_y = sum(softmax(x) * t)
#include "ops/softmax/softmax.h"

#include "framework/autograd/trace.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"
#include "ops/softmax/cpu/softmax_kernels.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
Tensor softmax(const Tensor& x, int64_t dim);  // ops/softmax/cuda/softmax.cu; dim wrapped, result contiguous
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor logsumexp(const Tensor& x, int64_t dim);  // keeps dim with size 1
}  // namespace cuda
#endif

namespace {

// The fused CPU backward serves first-order gradients; when the gradient will itself be
// differentiated (y or g traced), the Ember-op form below records what that needs.
bool fused_backward_ok(const Tensor& y, const Tensor& g) {
  return y.device() == Device::CPU && g.device() == Device::CPU && y.dim() > 0 && g.shape() == y.shape() &&
         g.dtype() == y.dtype() && !autograd::any_traced({&y, &g});
}

// 0-d inputs are handled as one row of length 1 by the public functions below.
int64_t checked_dim(const char* op, const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.defined(), op, ": input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), op, ": expected a float32 or float64 tensor, got ", x.dtype(),
              to_string(x.shape()));
  return wrap_dim(dim, x.dim(), op);
}

Tensor softmax_kernel(const Tensor& x, int64_t d) {
#ifdef EMBER_CUDA
  if (x.device() == Device::CUDA) return cuda::softmax(x, d);
#endif
  check_cpu(x, "softmax");
  return cpu::softmax(x, d);
}

Tensor log_softmax_kernel(const Tensor& x, int64_t d) {
#ifdef EMBER_CUDA
  if (x.device() == Device::CUDA) return cuda::log_softmax(x, d);
#endif
  check_cpu(x, "log_softmax");
  return cpu::log_softmax(x, d);
}

Tensor logsumexp_kernel(const Tensor& x, int64_t d) {
#ifdef EMBER_CUDA
  if (x.device() == Device::CUDA) return cuda::logsumexp(x, d);
#endif
  check_cpu(x, "logsumexp");
  return cpu::logsumexp(x, d);
}

// y * (v - sum(v * y)): softmax's VJP and JVP alike (its Jacobian is symmetric).
Tensor softmax_jacobian_times(const Tensor& y, const Tensor& v, int64_t d) {
  return y * (v - sum(v * y, {d}, true));
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  int64_t d = checked_dim("softmax", x, dim);
  if (x.dim() == 0) return softmax(x.reshape({1}), 0).reshape({});
  auto r = autograd::record(
      "softmax", {x}, [&](const autograd::Args& a) { return softmax(a[0], d); },
      [&](const Tensor& y, const autograd::Args&) -> autograd::VjpFn {
        return [y, d](const Tensor& g, int) {
          if (fused_backward_ok(y, g)) return cpu::softmax_backward(y, g, d);
          return softmax_jacobian_times(y, g, d);
        };
      },
      [&](const autograd::Args& t, const Tensor& y, const autograd::Args&) {
        return softmax_jacobian_times(y, t[0], d);
      });
  return r ? *r : softmax_kernel(x, d);
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  int64_t d = checked_dim("log_softmax", x, dim);
  if (x.dim() == 0) return log_softmax(x.reshape({1}), 0).reshape({});
  auto r = autograd::record(
      "log_softmax", {x}, [&](const autograd::Args& a) { return log_softmax(a[0], d); },
      [&](const Tensor& y, const autograd::Args&) -> autograd::VjpFn {
        return [y, d](const Tensor& g, int) {
          if (fused_backward_ok(y, g)) return cpu::log_softmax_backward(y, g, d);
          return g - exp(y) * sum(g, {d}, true);
        };
      },
      [&](const autograd::Args& t, const Tensor& y, const autograd::Args&) {
        return t[0] - sum(exp(y) * t[0], {d}, true);
      });
  return r ? *r : log_softmax_kernel(x, d);
}

Tensor logsumexp(const Tensor& x, int64_t dim, bool keepdim) {
  int64_t d = checked_dim("logsumexp", x, dim);
  if (x.dim() == 0) return logsumexp(x.reshape({1}), 0, false);
  auto r = autograd::record(
      "logsumexp", {x}, [&](const autograd::Args& a) { return logsumexp(a[0], d, keepdim); },
      [&](const Tensor&, const autograd::Args& a) -> autograd::VjpFn {
        return [x = a[0], d, keepdim](const Tensor& g, int) {
          return (keepdim ? g : g.unsqueeze(d)) * softmax(x, d);
        };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args& a) {
        return sum(softmax(a[0], d) * t[0], {d}, keepdim);
      });
  if (r) return *r;
  Tensor y = logsumexp_kernel(x, d);
  return keepdim ? y : y.squeeze(d);
}

}  // namespace ember

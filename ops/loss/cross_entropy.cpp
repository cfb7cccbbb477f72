// cross_entropy: checks, dispatch, and the VJP/JVP with p = softmax(logits) and y = one_hot(targets):
//   dlogits = (p - y) * g / N,   t_loss = sum((p - y) * t) / N
// softmax is itself a differentiable primitive, so grad of grad (Hessian-vector products) works.
#include "ops/loss/cross_entropy.h"

#include "framework/autograd/trace.h"
#include "ops/elementwise/elementwise.h"
#include "ops/loss/cpu/cross_entropy_kernels.h"
#include "ops/reduce/reduce.h"
#include "ops/softmax/softmax.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
// ops/loss/cuda/cross_entropy.cu; targets on the logits' device, checked to lie in [0, C).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets);
}  // namespace cuda
#endif

namespace {

void check_args(const Tensor& logits, const Tensor& targets) {
  EMBER_CHECK(logits.defined() && targets.defined(), "cross_entropy: logits or targets are undefined");
  EMBER_CHECK(is_floating(logits.dtype()), "cross_entropy: logits must be float32 or float64, got ", logits.dtype(),
              to_string(logits.shape()));
  EMBER_CHECK(targets.dtype() == DType::Int64, "cross_entropy: targets must be int64 class indices, got ",
              targets.dtype(), to_string(targets.shape()));
  EMBER_CHECK(logits.dim() >= 1 && logits.size(-1) > 0, "cross_entropy: logits need a non-empty class dim, got shape ",
              to_string(logits.shape()));
  Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  EMBER_CHECK(targets.shape() == lead, "cross_entropy: logits ", to_string(logits.shape()), " need targets of shape ",
              to_string(lead), ", got ", to_string(targets.shape()));
  EMBER_CHECK(targets.numel() > 0, "cross_entropy: no targets (logits of shape ", to_string(logits.shape()), ")");
  EMBER_CHECK(logits.device() == targets.device(), "cross_entropy: logits are on ", logits.device(),
              " but targets on ", targets.device());
}

Tensor cross_entropy_kernel(const Tensor& logits, const Tensor& targets) {
#ifdef EMBER_CUDA
  if (logits.device() == Device::CUDA) return cuda::cross_entropy(logits, targets);
#endif
  check_cpu(logits, "cross_entropy");
  return cpu::cross_entropy(logits, targets);
}

// softmax(logits) - one_hot(targets), scaled by 1/N: the loss's gradient, as Ember ops.
Tensor loss_gradient(const Tensor& logits, const Tensor& targets) {
  Tensor cpu_targets = targets.device() == Device::CPU ? targets : targets.to(Device::CPU);
  Tensor y = cpu::one_hot(cpu_targets, logits.size(-1), logits.dtype());
  if (logits.device() != Device::CPU) y = y.to(logits.device());
  return (softmax(logits, -1) - y) / double(targets.numel());
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& targets_in) {
  check_args(logits, targets_in);
  Tensor targets = targets_in.detach();  // class indices carry no gradient
  auto r = autograd::record(
      "cross_entropy", {logits}, [&](const autograd::Args& a) { return cross_entropy(a[0], targets); },
      [&](const Tensor&, const autograd::Args& a) -> autograd::VjpFn {
        return [logits = a[0], targets](const Tensor& g, int) {
          // First-order CPU gradients: one fused pass; otherwise the Ember-op form, which can be
          // differentiated again (Hessian-vector products).
          if (logits.device() == Device::CPU && g.device() == Device::CPU && !autograd::any_traced({&logits, &g}))
            return cpu::cross_entropy_backward(logits, targets, g.item() / double(targets.numel()));
          return loss_gradient(logits, targets) * g;
        };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args& a) {
        return sum(loss_gradient(a[0], targets) * t[0]);
      });
  return r ? *r : cross_entropy_kernel(logits, targets);
}

}  // namespace ember

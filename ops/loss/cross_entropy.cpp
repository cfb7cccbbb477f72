// cross_entropy: checks, dispatch, and the VJP/JVP with p = softmax(logits) and y = one_hot(targets):
//   dlogits = (p - y) * g / N,   t_loss = sum((p - y) * t) / N
// softmax is itself a differentiable primitive, so grad of grad (Hessian-vector products) works.
#include "ops/loss/cross_entropy.h"

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/elementwise/elementwise.h"
#include "ops/loss/cpu/cross_entropy_kernels.h"
#include "ops/reduce/reduce.h"
#include "ops/softmax/softmax.h"
#include "ops/cuda_kernels.h"

namespace ember {

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
  if (logits.device() == Device::CUDA) return cuda_kernels::cross_entropy(logits, targets);
  check_cpu(logits, "cross_entropy");
  return cpu::cross_entropy(logits, targets);
}

// softmax(logits) - one_hot(targets), scaled by 1/N: the loss's gradient, as Ember ops. The
// one-hot constant is built on the logits' device.
Tensor loss_gradient(const Tensor& logits, const Tensor& targets) {
  Tensor y = logits.device() == Device::CUDA ? cuda_kernels::one_hot(targets, logits.size(-1), logits.dtype())
                                             : cpu::one_hot(targets, logits.size(-1), logits.dtype());
  return (softmax(logits, -1) - y) / double(targets.numel());
}

// Input 1 (the class indices) carries no gradient. First-order gradients take one fused pass on
// either device; otherwise the Ember-op form, which can be differentiated again (Hessian-vector products).
const Primitive<>& cross_entropy_op() {
  static const Primitive<> p =
      Primitive<>("cross_entropy")
          .all_devices([](const Args& a, const NoAttrs&) { return cross_entropy_kernel(a[0], a[1]); })
          .saves({0, 1}, false)
          .vjp([](const Tensor& g, const OpCall<>& c) {
            return Grads{c.needs(0) ? loss_gradient(c.in[0], c.in[1]) * g : Tensor(), Tensor()};
          })
          .fused_vjp(Device::CPU,
                     [](const Tensor& g, const OpCall<>& c) {
                       const Tensor &logits = c.in[0], &targets = c.in[1];
                       return Grads{cpu::cross_entropy_backward(logits, targets, g.item() / double(targets.numel())),
                                    Tensor()};
                     })
          .fused_vjp(Device::CUDA,
                     [](const Tensor& g, const OpCall<>& c) {
                       const Tensor &logits = c.in[0], &targets = c.in[1];
                       return Grads{cuda_kernels::cross_entropy_backward(logits, targets, g, 1.0 / double(targets.numel())),
                                    Tensor()};
                     })
          .jvp([](const Args& t, const OpCall<>& c) { return sum(loss_gradient(c.in[0], c.in[1]) * t[0]); });
  return p;
}

}  // namespace

void declare_loss_ops() { cross_entropy_op(); }

Tensor cross_entropy(const Tensor& logits, const Tensor& targets) {
  check_args(logits, targets);
  return cross_entropy_op()({logits, targets.detach()});
}

}  // namespace ember

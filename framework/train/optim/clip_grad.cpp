#include "framework/train/optim/clip_grad.h"

#include <cmath>

#include "framework/core/autograd/trace.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"

namespace ember::optim {

namespace {
// The TensorImpl of the eager-trace leaf under `p`, where backward() stores the gradient.
TensorImpl* leaf_impl(const Tensor& p) {
  for (TensorImpl* q = p.impl(); q && q->node; q = q->inner.get())
    if (q->trace == autograd::kEagerTrace) return q;
  return nullptr;
}
}  // namespace

double grad_norm(const std::vector<Tensor>& params) {
  autograd::NoGradGuard no_grad;
  double total = 0;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    g = g.detach();
    total += sum(g.to(DType::Float64) * g.to(DType::Float64)).item();
  }
  return std::sqrt(total);
}

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  EMBER_CHECK(max_norm > 0, "clip_grad_norm: max_norm must be > 0, got ", max_norm);
  double norm = grad_norm(params);
  EMBER_CHECK(std::isfinite(norm), "clip_grad_norm: the gradient norm is not finite (", norm, ")");
  if (norm <= max_norm) return norm;
  double scale = max_norm / (norm + 1e-6);
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : params) {
    TensorImpl* leaf = leaf_impl(p);
    if (!leaf || !leaf->grad) continue;
    // A new tensor rather than an in-place scale: backward may hand the same cotangent tensor to
    // several leaves (add's VJP passes g through), and scaling it in place would scale it twice.
    leaf->grad = (Tensor(leaf->grad) * scale).impl_ptr();
  }
  return norm;
}

}  // namespace ember::optim

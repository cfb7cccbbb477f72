#include "framework/train/functional/jacobian.h"

#include "ops/elementwise/elementwise.h"
#include "ops/shape/shape_ops.h"

namespace ember {

std::vector<Tensor> jacobian(const FnN& f, const std::vector<Tensor>& xs) {
  EMBER_CHECK(!xs.empty(), "jacobian: needs at least one input");
  auto [ys, vjp] = make_vjp([&f](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; }, xs);
  const Tensor& y = ys[0];
  EMBER_CHECK(y.defined() && is_floating(y.dtype()), "jacobian: f must return a float32 or float64 tensor");
  std::vector<std::vector<Tensor>> rows(xs.size());
  for (int64_t i = 0; i < y.numel(); ++i) {
    // The i-th unit cotangent picks row i of every input's Jacobian.
    Tensor e = zeros({y.numel()}, y.dtype(), y.device());
    e.set({i}, 1.0);
    std::vector<Tensor> g = vjp({e.reshape(y.shape())});
    for (size_t k = 0; k < xs.size(); ++k) rows[k].push_back(g[k]);
  }
  std::vector<Tensor> out;
  for (size_t k = 0; k < xs.size(); ++k) {
    Shape s = y.shape();
    s.insert(s.end(), xs[k].shape().begin(), xs[k].shape().end());
    out.push_back(rows[k].empty() ? zeros(s, xs[k].dtype(), xs[k].device()) : stack(rows[k], 0).reshape(s));
  }
  return out;
}

Tensor jacobian(const Fn1& f, const Tensor& x) {
  return jacobian([&f](const std::vector<Tensor>& in) { return f(in[0]); }, std::vector<Tensor>{x})[0];
}

Tensor hessian(const Fn1& f, const Tensor& x) { return jacobian(grad(f), x); }

}  // namespace ember

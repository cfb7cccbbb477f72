#include "ops/linear/linear.h"

#include "framework/autograd/trace.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/matmul.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_ops.h"

namespace ember {

namespace {

void check_args(const Tensor& x, const Tensor& w, const Tensor& b) {
  EMBER_CHECK(x.defined() && w.defined(), "linear: input and weight must be defined");
  EMBER_CHECK(w.dim() == 2, "linear: weight must be 2-d (out, in), got shape ", to_string(w.shape()));
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) == w.size(1), "linear: input of shape ", to_string(x.shape()),
              " does not end in the weight's in_features ", w.size(1), " (weight shape ", to_string(w.shape()), ")");
  EMBER_CHECK(x.dtype() == w.dtype(), "linear: input is ", x.dtype(), " but the weight is ", w.dtype());
  EMBER_CHECK(is_floating(x.dtype()), "linear: expected float32 or float64, got ", x.dtype());
  EMBER_CHECK(x.device() == w.device(), "linear: input on ", x.device(), " but the weight on ", w.device());
  if (b.defined()) {
    EMBER_CHECK(b.dim() == 1 && b.size(0) == w.size(0), "linear: bias must have shape (", w.size(0), "), got ",
                to_string(b.shape()));
    EMBER_CHECK(b.dtype() == w.dtype() && b.device() == w.device(), "linear: bias is ", b.dtype(), " on ", b.device(),
                ", the weight ", w.dtype(), " on ", w.device());
  }
}

Shape out_shape(const Tensor& x, const Tensor& w) {
  Shape s = x.shape();
  s.back() = w.size(0);
  return s;
}

// Raw values: one matmul, then the bias added in place (the result is fresh and contiguous).
Tensor linear_kernel(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor x2 = x.reshape({-1, x.size(-1)});
  Tensor y = matmul(x2, w.t());
  if (b.defined()) {
    if (y.device() == Device::CPU) {
      EMBER_DISPATCH_FLOAT(y.dtype(), "linear", [&] {
        scalar_t* yd = y.data<scalar_t>();
        Tensor bc = b.contiguous();
        const scalar_t* bd = bc.data<scalar_t>();
        const int64_t rows = y.size(0), n = y.size(1);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < n; ++j) yd[i * n + j] += bd[j];
      });
    } else {
      y = y + b;
    }
  }
  return y.reshape(out_shape(x, w));
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_args(x, weight, bias);
  autograd::Args args = bias.defined() ? autograd::Args{x, weight, bias} : autograd::Args{x, weight};
  auto r = autograd::record(
      "linear", args,
      [&](const autograd::Args& a) { return linear(a[0], a[1], a.size() > 2 ? a[2] : Tensor()); },
      [&](const Tensor&, const autograd::Args& a) -> autograd::VjpFn {
        // x for the weight's gradient, W for x's; the bias's needs neither.
        return [x = a[0], w = a[1]](const Tensor& g, int i) {
          Tensor g2 = g.reshape({-1, g.size(-1)});
          if (i == 0) return matmul(g2, w).reshape(x.shape());
          if (i == 1) return matmul(g2.t(), x.reshape({-1, x.size(-1)}));
          return sum(g2, {0});
        };
      },
      [&](const autograd::Args& t, const Tensor& ans, const autograd::Args& a) {
        Tensor out;
        auto acc = [&](const Tensor& v) { out = out.defined() ? out + v : v; };
        if (t[0].defined()) acc(linear(t[0], a[1]));
        if (t[1].defined()) acc(linear(a[0], t[1]));
        if (t.size() > 2 && t[2].defined()) out = out.defined() ? out + t[2] : expand(t[2], ans.shape());
        return out;
      });
  return r ? *r : linear_kernel(x, weight, bias);
}

}  // namespace ember

#include "ops/linear/linear.h"

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/elementwise/cpu/half_cast.h"
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
  // Under autocast the engine casts the operands to one dtype (ops/autocast/autocast_policy.cpp).
  const bool cast_at_dispatch = autocast::detail::active();
  EMBER_CHECK(x.dtype() == w.dtype() || cast_at_dispatch, "linear: input is ", x.dtype(), " but the weight is ", w.dtype());
  EMBER_CHECK(is_floating(x.dtype()), "linear: got ", x.dtype(), ", accepts float32, float64, bfloat16, float16");
  EMBER_CHECK(x.device() == w.device(), "linear: input on ", x.device(), " but the weight on ", w.device());
  if (b.defined()) {
    EMBER_CHECK(b.dim() == 1 && b.size(0) == w.size(0), "linear: bias must have shape (", w.size(0), "), got ",
                to_string(b.shape()));
    EMBER_CHECK((b.dtype() == w.dtype() || cast_at_dispatch) && b.device() == w.device(), "linear: bias is ", b.dtype(), " on ", b.device(),
                ", the weight ", w.dtype(), " on ", w.device());
  }
}

// x as a matrix of rows: its leading dims flattened. Spelled out rather than reshape({-1, d}),
// which cannot infer the -1 when d is 0.
Shape as_rows(const Tensor& x) {
  int64_t rows = 1;
  for (int64_t i = 0; i + 1 < x.dim(); ++i) rows *= x.size(i);
  return {rows, x.size(-1)};
}

Shape out_shape(const Tensor& x, const Tensor& w) {
  Shape s = x.shape();
  s.back() = w.size(0);
  return s;
}

// Raw values: one matmul, then the bias added in place (the result is fresh and contiguous).
Tensor linear_kernel(const Tensor& x, const Tensor& w, const Tensor& b) {
  if (is_half(x.dtype()) && x.device() == Device::CPU) {
    // Product and bias in float32, rounded to the input's dtype once.
    auto f32 = [](const Tensor& t) { return t.defined() ? cpu::cast_half(t, DType::Float32) : t; };
    return cpu::cast_half(linear_kernel(f32(x), f32(w), f32(b)), x.dtype());
  }
  Tensor x2 = x.reshape(as_rows(x));
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

// x for the weight's gradient, W for x's; the bias's needs neither.
const Primitive<>& linear_op() {
  static const Primitive<> p =
      Primitive<>("linear")
          .all_devices([](const Args& a, const NoAttrs&) { return linear_kernel(a[0], a[1], a.size() > 2 ? a[2] : Tensor()); })
          .dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16})
          .saves({0, 1}, false)
          .vjp([](const Tensor& g, const OpCall<>& c) {
            const Tensor &x = c.in[0], &w = c.in[1];
            Tensor g2 = g.reshape(as_rows(g));
            Grads out(c.in.size());
            if (c.needs(0)) out[0] = matmul(g2, w).reshape(x.shape());
            if (c.needs(1)) out[1] = matmul(g2.t(), x.reshape(as_rows(x)));
            if (out.size() > 2 && c.needs(2)) out[2] = sum(g2, {0});
            return out;
          })
          .jvp([](const Args& t, const OpCall<>& c) {
            Tensor out;
            auto acc = [&](const Tensor& v) { out = out.defined() ? out + v : v; };
            if (t[0].defined()) acc(linear(t[0], c.in[1]));
            if (t[1].defined()) acc(linear(c.in[0], t[1]));
            if (t.size() > 2 && t[2].defined()) out = out.defined() ? out + t[2] : expand(t[2], c.out.shape());
            return out;
          });
  return p;
}

}  // namespace

void declare_linear_ops() { linear_op(); }

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_args(x, weight, bias);
  return linear_op()(bias.defined() ? Args{x, weight, bias} : Args{x, weight});
}

}  // namespace ember

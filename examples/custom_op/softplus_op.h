// softplus(x) = log(1 + exp(x)) as ONE custom op: a fused CPU kernel (one pass, no temporaries)
// and a VJP/JVP written with Ember ops, so that its gradients differentiate again.
// Header-only so that the demo program and the test share the same definition.
#pragma once
#include <algorithm>
#include <cmath>

#include "ember.h"
#include "framework/core/custom_op.h"
#include "framework/core/parallel.h"

namespace softplus_example {

// The kernel sees untraced tensors; it may be given a view, so it makes its input contiguous.
inline ember::Tensor softplus_cpu(const std::vector<ember::Tensor>& in) {
  ember::Tensor x = in[0].contiguous();
  ember::Tensor y = ember::empty(x.shape(), x.dtype());
  EMBER_DISPATCH_FLOAT(x.dtype(), "softplus", [&] {
    const scalar_t* px = x.data<scalar_t>();
    scalar_t* py = y.data<scalar_t>();
    ember::parallel_for(x.numel(), 1 << 15, [&](int64_t b, int64_t e) {
      // max(x, 0) + log1p(t), t = exp(-|x|): no overflow for large x. log1p(t) is taken as
      // log(u) - ((u - 1) - t) / u with u = 1 + t rounded: (u - 1) - t is exactly the rounding
      // error, and the correction restores it (so t stays exact when u rounds to 1). Cheaper
      // than glibc's log1p, which costs more than exp and log together.
      for (int64_t i = b; i < e; ++i) {
        scalar_t t = std::exp(-std::abs(px[i])), u = scalar_t(1) + t;
        scalar_t l1p = std::log(u) - ((u - scalar_t(1)) - t) / u;
        py[i] = std::max(px[i], scalar_t(0)) + l1p;
      }
    });
  });
  return y;
}

inline const ember::CustomOp& softplus_op() {
  static const ember::CustomOp op =
      ember::CustomOp("softplus")
          .cpu(softplus_cpu)
          // d softplus / dx = sigmoid(x), an Ember op: grad of grad goes through sigmoid's own rule.
          .vjp([](const ember::Tensor& g, int, const std::vector<ember::Tensor>& in, const ember::Tensor&) {
            return g * ember::sigmoid(in[0]);
          })
          .jvp([](const std::vector<ember::Tensor>& t, const std::vector<ember::Tensor>& in, const ember::Tensor&) {
            return t[0] * ember::sigmoid(in[0]);
          });
  return op;
}

// Not named softplus: ember::softplus is the built-in (a parametric unary primitive), found by ADL.
inline ember::Tensor softplus_fused(const ember::Tensor& x) { return softplus_op()(x); }

// The same function from Ember's built-in ops (seven primitives), for comparison.
inline ember::Tensor softplus_composite(const ember::Tensor& x) {
  return ember::relu(x) + ember::log(1.0 + ember::exp(-ember::abs(x)));
}

}  // namespace softplus_example

// Whole Jacobians and Hessians from the public autodiff API: one VJP per output element (reverse
// mode, rows of J), the Hessian as the Jacobian of the gradient. For small functions and tests;
// a network's Jacobian is better left as its VJP or JVP.
#pragma once
#include <vector>

#include "framework/core/autograd/autograd.h"

namespace ember {

// J of f at x, of shape f(x).shape + x.shape: J[i..., j...] = d f(x)[i...] / d x[j...].
Tensor jacobian(const Fn1& f, const Tensor& x);
// One Jacobian per input, each of shape f(xs).shape + xs[k].shape.
std::vector<Tensor> jacobian(const FnN& f, const std::vector<Tensor>& xs);
// H of a function with a one-element output, of shape x.shape + x.shape (symmetric for smooth f).
Tensor hessian(const Fn1& f, const Tensor& x);

}  // namespace ember

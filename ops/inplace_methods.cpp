// Tensor's in-place arithmetic (add_, mul_, clamp_, ...). None is recorded by autograd: each
// computes the new value with the out-of-place op and writes it over this tensor's elements (views
// write through to their base), then stamps the storage so that a backward reading the old value
// fails loudly (see check_saved_unchanged in framework/core/autograd/autograd.cpp).
//
// They are refused on a tensor that autograd tracks while gradients are recorded, as PyTorch does:
// a traced value changed behind the trace's back would make every later gradient silently wrong
// (f(x) = {x.mul_(2); return x * x;} would differentiate to 4x instead of 8x). Inside NoGradGuard,
// as in an optimizer step, they write parameters freely.
#include "framework/core/autograd/node.h"
#include "framework/core/autograd/trace.h"
#include "framework/core/tensor.h"
#include "ops/elementwise/elementwise.h"

namespace ember {
namespace {

void check_writable(const Tensor& t, const char* op) {
  EMBER_CHECK(t.defined(), op, ": the tensor is undefined");
  if (!t.is_traced() || !autograd::grad_enabled()) return;
  const autograd::Node& n = *t.impl()->node;
  // A leaf with an index is an input that make_vjp / grad differentiates; one without, a tensor
  // marked with requires_grad_().
  const std::string what = !n.is_leaf           ? str("the result of the recorded op '", n.op, "'")
                           : n.leaf_index >= 0 ? str("input ", n.leaf_index, " of the function being differentiated")
                                               : std::string("a leaf that requires grad");
  throw Error(str(op, ": cannot modify ", what, " (", t.dtype(), " ", to_string(t.shape()),
                  ") in place while autograd records: its gradient would ignore the change; use the "
                  "out-of-place op, detach() first, or write under NoGradGuard (as an optimizer step does)"));
}

void check_operand(const Tensor& self, const Tensor& other, const char* op) {
  EMBER_CHECK(other.defined(), op, ": the other operand is undefined");
  EMBER_CHECK(broadcast_shapes(self.shape(), other.shape(), op) == self.shape(), op, ": an operand of shape ",
              to_string(other.shape()), " does not broadcast to this tensor's shape ", to_string(self.shape()),
              " (an in-place op cannot grow its tensor)");
  EMBER_CHECK(other.device() == self.device(), op, ": the operand is on ", other.device(), ", this tensor on ",
              self.device());
}

// Writes `value` (already of this tensor's shape or broadcastable to it) over `self`.
Tensor& assign(Tensor& self, const Tensor& value, const char* op) {
  self.copy_(value);
  self.impl()->storage->mark_written(op);
  return self;
}

template <class F>
Tensor& update(Tensor& self, const Tensor& other, const char* op, F&& f) {
  check_writable(self, op);
  check_operand(self, other, op);
  autograd::NoGradGuard no_grad;
  Tensor b = other.detach();
  if (b.dtype() != self.dtype()) b = b.to(self.dtype());  // the result keeps this tensor's dtype
  return assign(self, f(self.detach(), b), op);
}

template <class F>
Tensor& update(Tensor& self, const char* op, F&& f) {
  check_writable(self, op);
  autograd::NoGradGuard no_grad;
  return assign(self, f(self.detach()), op);
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  return update(*this, other, "add_", [&](const Tensor& a, const Tensor& b) { return alpha == 1.0 ? a + b : a + b * alpha; });
}
Tensor& Tensor::add_(double value) {
  return update(*this, "add_", [&](const Tensor& a) { return a + value; });
}
Tensor& Tensor::sub_(const Tensor& other) {
  return update(*this, other, "sub_", [](const Tensor& a, const Tensor& b) { return a - b; });
}
Tensor& Tensor::mul_(const Tensor& other) {
  return update(*this, other, "mul_", [](const Tensor& a, const Tensor& b) { return a * b; });
}
Tensor& Tensor::mul_(double value) {
  return update(*this, "mul_", [&](const Tensor& a) { return a * value; });
}
Tensor& Tensor::div_(const Tensor& other) {
  return update(*this, other, "div_", [](const Tensor& a, const Tensor& b) { return a / b; });
}
Tensor& Tensor::div_(double value) {
  return update(*this, "div_", [&](const Tensor& a) { return a / value; });
}
Tensor& Tensor::clamp_(double lo, double hi) {
  return update(*this, "clamp_", [&](const Tensor& a) { return ember::clamp(a, lo, hi); });
}

}  // namespace ember

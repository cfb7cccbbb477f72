// The methods of Tensor that are ops (framework/core/tensor.h declares them, for method syntax): they
// record on a trace like the free functions they call, so they belong to the ops layer, and the
// core never calls them (tests/layers_test.cpp checks the includes).
#include "framework/core/device_copy.h"
#include "framework/core/tensor.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/matmul.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_ops.h"
#include "ops/softmax/softmax.h"

namespace ember {

Tensor Tensor::reshape(const Shape& s) const { return ember::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return ember::view(*this, s); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return ember::transpose(*this, a, b); }
Tensor Tensor::permute(const Shape& d) const { return ember::permute(*this, d); }
Tensor Tensor::slice(int64_t d, int64_t s, int64_t e, int64_t st) const { return ember::slice(*this, d, s, e, st); }
Tensor Tensor::expand(const Shape& s) const { return ember::expand(*this, s); }
Tensor Tensor::unsqueeze(int64_t d) const { return ember::unsqueeze(*this, d); }
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  // Unlike slice, narrow promises `length` elements: a window past the end or a negative length
  // is an error, not a clamped or empty result.
  EMBER_CHECK(defined(), "narrow: input is undefined");
  EMBER_CHECK(dim() > 0, "narrow: cannot narrow a 0-d tensor");
  const int64_t n = size(d);
  EMBER_CHECK(start >= -n && start <= n, "narrow: start ", start, " is out of range for dimension ", d, " of size ", n,
              " (expected ", -n, " to ", n, ")");
  if (start < 0) start += n;
  EMBER_CHECK(length >= 0 && length <= n - start, "narrow: length ", length, " from start ", start,
              " does not fit dimension ", d, " of size ", n, " (expected 0 to ", n - start, ")");
  return slice(d, start, start + length);
}
Tensor Tensor::squeeze(int64_t d) const { return ember::squeeze(*this, d); }
Tensor Tensor::contiguous() const { return is_contiguous() ? *this : ember::copy(*this); }
Tensor Tensor::clone() const { return ember::copy(*this); }
Tensor Tensor::to(DType t) const { return ember::cast(*this, t); }

Tensor Tensor::to(Device d) const {
  if (d == device()) return *this;
  EMBER_CHECK(!is_traced(), "to(", d, "): moving a traced tensor between devices is not differentiable yet; detach() first");
  Tensor src = contiguous();
  Tensor out = empty(shape(), dtype(), d);
  copy_bytes(out.raw_data(), d, src.raw_data(), src.device(), size_t(numel()) * itemsize(dtype()));
  return out;
}

Tensor& Tensor::copy_(const Tensor& src) {
  EMBER_CHECK(src.defined(), "copy_: source is undefined");
  Tensor s = src.detach();
  if (s.shape() != shape()) {
    EMBER_CHECK(broadcast_shapes(s.shape(), shape(), "copy_") == shape(), "copy_: source of shape ",
                ember::to_string(s.shape()), " does not broadcast to the destination's shape ", ember::to_string(shape()));
    s = ember::expand(s, shape());
  }
  if (s.dtype() != dtype()) s = ember::cast(s, dtype());
  if (s.device() != device()) s = s.to(device());
  // A source sharing this tensor's storage (x.copy_(x.t()), a shifted slice) may overlap the
  // destination; copying it first keeps every read ahead of the writes.
  if (s.impl()->storage == impl_->storage) s = contiguous_kernel(s);
  copy_strided(*this, s);
  impl_->storage->mark_written("copy_");
  return *this;
}

// ---- method syntax for the common ops: one-line forwards to the free functions ----
Tensor Tensor::sum() const { return ember::sum(*this); }
Tensor Tensor::sum(int64_t d, bool keep) const { return ember::sum(*this, {d}, keep); }
Tensor Tensor::sum(const Shape& dims, bool keep) const { return ember::sum(*this, dims, keep); }
Tensor Tensor::mean() const { return ember::mean(*this); }
Tensor Tensor::mean(int64_t d, bool keep) const { return ember::mean(*this, {d}, keep); }
Tensor Tensor::mean(const Shape& dims, bool keep) const { return ember::mean(*this, dims, keep); }
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::max(int64_t d, bool keep) const { return ember::max(*this, d, keep); }
Tensor Tensor::min() const { return ember::min(*this); }
Tensor Tensor::min(int64_t d, bool keep) const { return ember::min(*this, d, keep); }
Tensor Tensor::argmax(int64_t d, bool keep) const { return ember::argmax(*this, d, keep); }
Tensor Tensor::argmin(int64_t d, bool keep) const { return ember::argmin(*this, d, keep); }
Tensor Tensor::exp() const { return ember::exp(*this); }
Tensor Tensor::log() const { return ember::log(*this); }
Tensor Tensor::sqrt() const { return ember::sqrt(*this); }
Tensor Tensor::abs() const { return ember::abs(*this); }
Tensor Tensor::neg() const { return ember::neg(*this); }
Tensor Tensor::relu() const { return ember::relu(*this); }
Tensor Tensor::tanh() const { return ember::tanh(*this); }
Tensor Tensor::sigmoid() const { return ember::sigmoid(*this); }
Tensor Tensor::square() const { return ember::square(*this); }
Tensor Tensor::pow(double e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::clamp(double lo, double hi) const { return ember::clamp(*this, lo, hi); }
Tensor Tensor::matmul(const Tensor& w) const { return ember::matmul(*this, w); }
Tensor Tensor::softmax(int64_t d) const { return ember::softmax(*this, d); }
Tensor Tensor::log_softmax(int64_t d) const { return ember::log_softmax(*this, d); }
Tensor Tensor::gt(double v) const { return ember::gt(*this, scalar_like(*this, v)); }
Tensor Tensor::ge(double v) const { return ember::ge(*this, scalar_like(*this, v)); }
Tensor Tensor::lt(double v) const { return ember::lt(*this, scalar_like(*this, v)); }
Tensor Tensor::le(double v) const { return ember::le(*this, scalar_like(*this, v)); }
Tensor Tensor::eq(double v) const { return ember::eq(*this, scalar_like(*this, v)); }
Tensor Tensor::gt(const Tensor& o) const { return ember::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return ember::ge(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return ember::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return ember::le(*this, o); }
Tensor Tensor::eq(const Tensor& o) const { return ember::eq(*this, o); }
Tensor Tensor::ne(double v) const { return ember::ne(*this, scalar_like(*this, v)); }
Tensor Tensor::ne(const Tensor& o) const { return ember::ne(*this, o); }
Tensor Tensor::logical_not() const { return ember::logical_not(*this); }

}  // namespace ember

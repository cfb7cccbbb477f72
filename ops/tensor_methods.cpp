// The methods of Tensor that are ops (framework/tensor.h declares them, for method syntax): they
// record on a trace like the free functions they call, so they belong to the ops layer, and the
// core never calls them (tests/layers_test.cpp checks the includes).
#include "framework/device_copy.h"
#include "framework/tensor.h"
#include "ops/elementwise/elementwise.h"
#include "ops/shape/shape_ops.h"

namespace ember {

Tensor Tensor::reshape(const Shape& s) const { return ember::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return ember::view(*this, s); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return ember::transpose(*this, a, b); }
Tensor Tensor::permute(const Shape& d) const { return ember::permute(*this, d); }
Tensor Tensor::slice(int64_t d, int64_t s, int64_t e, int64_t st) const { return ember::slice(*this, d, s, e, st); }
Tensor Tensor::expand(const Shape& s) const { return ember::expand(*this, s); }
Tensor Tensor::unsqueeze(int64_t d) const { return ember::unsqueeze(*this, d); }
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

}  // namespace ember

// Copies: contiguous(), slice's VJP, concat/stack/split.
#include <algorithm>
#include <cstring>

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "framework/core/parallel.h"
#include "framework/core/strided.h"
#include "ops/elementwise/elementwise.h"
#include "ops/shape/shape_ops.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {
// Elements a thread's share of a strided copy must have to pay for waking it.
constexpr int64_t kCopyGrain = int64_t(1) << 15;
}  // namespace

// dst[...] = src[...] elementwise; same shape and dtype, any strides.
void copy_strided(const Tensor& dst, const Tensor& src) {
  EMBER_CHECK(dst.shape() == src.shape() && dst.dtype() == src.dtype() && dst.device() == src.device(),
              "copy_strided: mismatched tensors ", dst.dtype(), to_string(dst.shape()), " and ", src.dtype(),
              to_string(src.shape()));
  if (dst.device() == Device::CUDA) return cuda_kernels::copy_strided(dst, src);
  if (dst.is_contiguous() && src.is_contiguous()) {
    std::memcpy(dst.raw_data(), src.raw_data(), size_t(src.numel()) * itemsize(src.dtype()));
    return;
  }
  // Rows whose elements are adjacent on both sides (the heads' transposes of attention) go as
  // memcpy, and threads take ranges of rows once there are enough elements to pay for them.
  const int64_t len = src.dim() ? std::max<int64_t>(src.shape().back(), 1) : 1;
  const int64_t grain = std::max<int64_t>(1, kCopyGrain / len);
  EMBER_DISPATCH_EVERY(src.dtype(), "copy", [&] {
    scalar_t* o = static_cast<scalar_t*>(dst.impl()->storage->data());
    const scalar_t* in = static_cast<const scalar_t*>(src.impl()->storage->data());
    int64_t so = dst.dim() ? dst.strides().back() : 1, si = src.dim() ? src.strides().back() : 1;
    parallel_for(row_count(src.shape()), grain, [&](int64_t r0, int64_t r1) {
      for_each_row_in<2>(src.shape(), {&dst.strides(), &src.strides()}, {dst.offset(), src.offset()}, r0, r1,
                         [&](const std::array<int64_t, 2>& off, int64_t n) {
                           if (so == 1 && si == 1) {
                             std::memcpy(o + off[0], in + off[1], size_t(n) * sizeof(scalar_t));
                             return;
                           }
                           for (int64_t i = 0; i < n; ++i) o[off[0] + i * so] = in[off[1] + i * si];
                         });
    });
  });
}

Tensor contiguous_kernel(const Tensor& x) {
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  copy_strided(out, x);
  return out;
}

namespace {

struct SliceBackwardAttrs {
  Shape shape;  // of the sliced tensor
  int64_t dim, start, step;
  int64_t end(const Tensor& g) const { return start + (g.shape()[size_t(dim)] - 1) * step + 1; }
};
struct ConcatAttrs {
  int64_t dim;
  std::vector<int64_t> sizes;  // of each part along dim
};

Tensor slice_backward_kernel(const Tensor& g, const SliceBackwardAttrs& a) {
  Tensor out = zeros(a.shape, g.dtype(), g.device());
  if (g.shape()[size_t(a.dim)] > 0) copy_strided(slice(out, a.dim, a.start, a.end(g), a.step), g);
  return out;
}

Tensor concat_kernel(const std::vector<Tensor>& xs, const ConcatAttrs& a) {
  Shape out_shape = xs[0].shape();
  out_shape[size_t(a.dim)] = 0;
  for (int64_t s : a.sizes) out_shape[size_t(a.dim)] += s;
  Tensor out = empty(out_shape, xs[0].dtype(), xs[0].device());
  int64_t start = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (a.sizes[i] > 0) copy_strided(slice(out, a.dim, start, start + a.sizes[i]), xs[i]);
    start += a.sizes[i];
  }
  return out;
}

// Kernels that run on every device: they are built from copy_strided, which dispatches itself.
template <class A, class F>
Primitive<A> on_every_device(const char* name, F kernel) {
  auto k = [kernel](const Args& x, const A& a) { return KernelOut(kernel(x, a)); };
  return Primitive<A>(name).all_devices(k).dtypes(
      {DType::Float32, DType::Float64, DType::Int64, DType::BFloat16, DType::Float16});
}

struct CopyPrims {
  Primitive<> copy = on_every_device<NoAttrs>("copy", [](const Args& x, const NoAttrs&) { return contiguous_kernel(x[0]); })
                         .saves({}, false)
                         .vjp([](const Tensor& g, const OpCall<>&) { return Grads{g}; })
                         .jvp([](const Args& t, const OpCall<>&) { return t[0]; });
  Primitive<SliceBackwardAttrs> slice_backward =
      on_every_device<SliceBackwardAttrs>(
          "slice_backward", [](const Args& x, const SliceBackwardAttrs& a) { return slice_backward_kernel(x[0], a); })
          .saves({}, false)
          .vjp([](const Tensor& gg, const OpCall<SliceBackwardAttrs>& c) {
            const SliceBackwardAttrs& a = c.attrs;
            int64_t len = c.in_shape(0)[size_t(a.dim)];
            return Grads{slice(gg, a.dim, a.start, a.start + (len - 1) * a.step + 1, a.step)};
          })
          .jvp([](const Args& t, const OpCall<SliceBackwardAttrs>& c) {
            const SliceBackwardAttrs& a = c.attrs;
            return ember::slice_backward(t[0], a.shape, a.dim, a.start, a.step);
          });
  Primitive<ConcatAttrs> concat =
      on_every_device<ConcatAttrs>("concat", [](const Args& x, const ConcatAttrs& a) { return concat_kernel(x, a); })
          .saves({}, false)
          .vjp([](const Tensor& g, const OpCall<ConcatAttrs>& c) {
            Grads out(c.attrs.sizes.size());
            int64_t start = 0;
            for (size_t i = 0; i < out.size(); ++i) {
              if (c.needs(i)) out[i] = slice(g, c.attrs.dim, start, start + c.attrs.sizes[i]);
              start += c.attrs.sizes[i];
            }
            return out;
          })
          .jvp([](const Args& t, const OpCall<ConcatAttrs>& c) {
            std::vector<Tensor> parts;
            for (size_t i = 0; i < t.size(); ++i) parts.push_back(t[i].defined() ? t[i] : zeros_like(c.in[i]));
            return ember::concat(parts, c.attrs.dim);
          });
};

const CopyPrims& prims() {
  static const CopyPrims p;
  return p;
}

}  // namespace

void declare_copy_ops() { prims(); }

Tensor copy(const Tensor& x) {
  EMBER_CHECK(x.defined(), "copy: input is undefined");
  return prims().copy({x});
}

Tensor slice_backward(const Tensor& g, const Shape& shape, int64_t dim, int64_t start, int64_t step) {
  EMBER_CHECK(g.defined(), "slice_backward: g is undefined");
  EMBER_CHECK(g.dim() == int64_t(shape.size()) && dim >= 0 && dim < g.dim() && start >= 0 && step > 0,
              "slice_backward: g of shape ", to_string(g.shape()), " cannot be a slice of ", to_string(shape),
              " along dim ", dim, " from ", start, " by ", step);
  return prims().slice_backward({g}, SliceBackwardAttrs{shape, dim, start, step});
}

Tensor concat(const std::vector<Tensor>& xs, int64_t dim) {
  EMBER_CHECK(!xs.empty(), "concat: needs at least one tensor");
  const Tensor& first = xs[0];
  EMBER_CHECK(first.defined() && first.dim() > 0, "concat: tensors must be defined and at least 1-d");
  int64_t d = wrap_dim(dim, first.dim(), "concat");
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    EMBER_CHECK(x.defined(), "concat: tensor ", i, " is undefined");
    EMBER_CHECK(x.dtype() == first.dtype() && x.device() == first.device(), "concat: tensor ", i, " is ", x.dtype(),
                " on ", x.device(), ", expected ", first.dtype(), " on ", first.device());
    bool ok = x.dim() == first.dim();
    for (int64_t k = 0; ok && k < x.dim(); ++k) ok = k == d || x.shape()[size_t(k)] == first.shape()[size_t(k)];
    EMBER_CHECK(ok, "concat: tensor ", i, " has shape ", to_string(x.shape()), ", which does not match ",
                to_string(first.shape()), " outside dim ", d);
    sizes.push_back(x.shape()[size_t(d)]);
  }
  return prims().concat(xs, ConcatAttrs{d, sizes});
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  EMBER_CHECK(!xs.empty() && xs[0].defined(), "stack: needs at least one defined tensor");
  int64_t d = wrap_dim(dim, xs[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    EMBER_CHECK(xs[i].defined() && xs[i].shape() == xs[0].shape(), "stack: tensor ", i, " has shape ",
                xs[i].defined() ? to_string(xs[i].shape()) : "undefined", ", expected ", to_string(xs[0].shape()));
    parts.push_back(unsqueeze(xs[i], d));
  }
  return concat(parts, d);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  EMBER_CHECK(x.defined() && x.dim() > 0, "split: input must be defined and at least 1-d");
  int64_t d = wrap_dim(dim, x.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, "split: negative size in the list");
    total += s;
  }
  EMBER_CHECK(total == x.shape()[size_t(d)], "split: sizes add up to ", total, " but dim ", d, " of shape ",
              to_string(x.shape()), " is ", x.shape()[size_t(d)]);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, d, start, start + s));
    start += s;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t dim) {
  EMBER_CHECK(x.defined() && x.dim() > 0, "split: input must be defined and at least 1-d");
  EMBER_CHECK(size > 0, "split: piece size must be positive, got ", size);
  int64_t n = x.shape()[size_t(wrap_dim(dim, x.dim(), "split"))];
  std::vector<int64_t> sizes;
  for (int64_t s = 0; s < n; s += size) sizes.push_back(std::min(size, n - s));
  return split(x, sizes, dim);
}

}  // namespace ember

// Copies: contiguous(), slice's VJP, concat/stack/split.
#include <cstring>

#include "framework/autograd/trace.h"
#include "framework/strided.h"
#include "ops/elementwise/elementwise.h"
#include "ops/shape/shape_ops.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
void copy_strided(const Tensor& dst, const Tensor& src);  // ops/shape/cuda/copy.cu
}
#endif

// dst[...] = src[...] elementwise; same shape and dtype, any strides.
void copy_strided(const Tensor& dst, const Tensor& src) {
  EMBER_CHECK(dst.shape() == src.shape() && dst.dtype() == src.dtype() && dst.device() == src.device(),
              "copy_strided: mismatched tensors ", dst.dtype(), to_string(dst.shape()), " and ", src.dtype(),
              to_string(src.shape()));
#ifdef EMBER_CUDA
  if (dst.device() == Device::CUDA) return cuda::copy_strided(dst, src);
#endif
  if (dst.is_contiguous() && src.is_contiguous()) {
    std::memcpy(dst.raw_data(), src.raw_data(), size_t(src.numel()) * itemsize(src.dtype()));
    return;
  }
  EMBER_DISPATCH_ALL(src.dtype(), "copy", [&] {
    scalar_t* o = static_cast<scalar_t*>(dst.impl()->storage->data());
    const scalar_t* in = static_cast<const scalar_t*>(src.impl()->storage->data());
    int64_t so = dst.dim() ? dst.strides().back() : 1, si = src.dim() ? src.strides().back() : 1;
    for_each_row<2>(src.shape(), {&dst.strides(), &src.strides()}, {dst.offset(), src.offset()},
                    [&](const std::array<int64_t, 2>& off, int64_t len) {
                      for (int64_t i = 0; i < len; ++i) o[off[0] + i * so] = in[off[1] + i * si];
                    });
  });
}

Tensor contiguous_kernel(const Tensor& x) {
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  copy_strided(out, x);
  return out;
}

Tensor copy(const Tensor& x) {
  EMBER_CHECK(x.defined(), "copy: input is undefined");
  auto r = autograd::record(
      "copy", {x}, [](const autograd::Args& a) { return copy(a[0]); },
      [](const Tensor&, const autograd::Args&) -> autograd::VjpFn { return [](const Tensor& g, int) { return g; }; },
      [](const autograd::Args& t, const Tensor&, const autograd::Args&) { return t[0]; });
  return r ? *r : contiguous_kernel(x);
}

Tensor slice_backward(const Tensor& g, const Shape& shape, int64_t dim, int64_t start, int64_t step) {
  int64_t len = g.shape()[size_t(dim)];
  int64_t end = start + (len - 1) * step + 1;
  auto r = autograd::record(
      "slice_backward", {g}, [&](const autograd::Args& a) { return slice_backward(a[0], shape, dim, start, step); },
      [&](const Tensor&, const autograd::Args&) -> autograd::VjpFn {
        return [dim, start, end, step](const Tensor& gg, int) { return slice(gg, dim, start, end, step); };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args&) {
        return slice_backward(t[0], shape, dim, start, step);
      });
  if (r) return *r;
  Tensor out = zeros(shape, g.dtype(), g.device());
  if (len > 0) copy_strided(slice(out, dim, start, end, step), g);
  return out;
}

Tensor concat(const std::vector<Tensor>& xs, int64_t dim) {
  EMBER_CHECK(!xs.empty(), "concat: needs at least one tensor");
  const Tensor& first = xs[0];
  EMBER_CHECK(first.defined() && first.dim() > 0, "concat: tensors must be defined and at least 1-d");
  int64_t d = wrap_dim(dim, first.dim(), "concat");
  Shape out_shape = first.shape();
  out_shape[size_t(d)] = 0;
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
    out_shape[size_t(d)] += sizes.back();
  }
  auto r = autograd::record(
      "concat", xs, [&](const autograd::Args& a) { return concat(a, d); },
      [&](const Tensor&, const autograd::Args&) -> autograd::VjpFn {
        return [sizes, d](const Tensor& g, int i) {
          int64_t start = 0;
          for (int k = 0; k < i; ++k) start += sizes[size_t(k)];
          return slice(g, d, start, start + sizes[size_t(i)]);
        };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args& a) {
        std::vector<Tensor> parts;
        for (size_t i = 0; i < a.size(); ++i) parts.push_back(t[i].defined() ? t[i] : zeros_like(a[i]));
        return concat(parts, d);
      });
  if (r) return *r;
  Tensor out = empty(out_shape, first.dtype(), first.device());
  int64_t start = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (sizes[i] > 0) copy_strided(slice(out, d, start, start + sizes[i]), xs[i]);
    start += sizes[i];
  }
  return out;
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

// View primitives: each builds a TensorImpl over the same storage with new shape/strides/offset.
#include <numeric>

#include "framework/core/autograd/primitive.h"
#include "framework/core/max_rank.h"
#include "ops/op_list.h"
#include "framework/core/strided.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_ops.h"

namespace ember {
namespace {

Tensor make_view(const Tensor& x, Shape shape, Shape strides, int64_t offset) {
  check_rank(shape.size(), "view");  // unsqueeze, reshape and expand may add dimensions
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.impl()->storage;
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = x.dtype();
  return Tensor(std::move(impl));
}

Shape infer_shape(const Shape& shape, int64_t n, const Tensor& x, const char* op) {
  Shape out = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      EMBER_CHECK(infer < 0, op, ": only one dimension may be -1 in ", to_string(shape));
      infer = int64_t(i);
    } else {
      EMBER_CHECK(out[i] >= 0, op, ": negative size in ", to_string(shape));
      known *= out[i];
    }
  }
  if (infer >= 0) {
    EMBER_CHECK(known != 0 && n % known == 0, op, ": cannot infer -1 in ", to_string(shape), " for ", n, " elements");
    out[size_t(infer)] = n / known;
  }
  EMBER_CHECK(numel(out) == n, op, ": cannot view a tensor of shape ", to_string(x.shape()), " (", n,
              " elements) as ", to_string(shape));
  return out;
}

// Strides under which `shape` reads the same elements, in the same order, as x's layout does, or
// false when that needs a copy. A view can split a dimension, or merge dimensions that are
// contiguous with each other (stride[i] == stride[i+1] * size[i+1]), so it works chunk by chunk:
// each maximal run of mutually contiguous dims of x must be covered exactly by a run of new dims.
// A contiguous x gets contiguous strides; size-1 dims of x carry no layout and are skipped.
bool view_strides(const Tensor& x, const Shape& shape, Shape& out) {
  if (x.is_contiguous() || x.numel() == 0) {
    out = contiguous_strides(shape);
    return true;
  }
  std::vector<std::pair<int64_t, int64_t>> dims;  // (size, stride) of x's dims of size > 1
  for (int64_t i = 0; i < x.dim(); ++i)
    if (x.size(i) != 1) dims.push_back({x.size(i), x.strides()[size_t(i)]});
  out.assign(shape.size(), 1);
  int64_t k = int64_t(shape.size()) - 1;
  for (int64_t hi = int64_t(dims.size()) - 1; hi >= 0;) {
    int64_t lo = hi, elems = dims[size_t(hi)].first;
    while (lo > 0 && dims[size_t(lo - 1)].second == dims[size_t(lo)].second * dims[size_t(lo)].first)
      elems *= dims[size_t(--lo)].first;
    const int64_t stride = dims[size_t(hi)].second;
    int64_t covered = 1;
    for (; covered < elems && k >= 0; --k) {
      out[size_t(k)] = stride * covered;
      covered *= shape[size_t(k)];
    }
    if (covered != elems) return false;  // the new dims cut across this chunk's boundary
    hi = lo - 1;
  }
  for (; k >= 0; --k) {
    if (shape[size_t(k)] != 1) return false;
    out[size_t(k)] = k + 1 < int64_t(shape.size()) ? out[size_t(k + 1)] * shape[size_t(k + 1)] : 1;
  }
  return true;
}

// The view primitives: each kernel builds a TensorImpl over the same storage; each VJP maps the
// cotangent back with another (recorded) op, so higher-order derivatives flow through views, and
// each JVP takes the same view of the tangent.
struct ViewAttrs {
  Shape shape;  // view: the new shape; permute: the permutation; expand: the target; (un)squeeze: the result
  Shape inv;    // permute: the inverse permutation
  int64_t dim = 0, start = 0, step = 1, len = 0;  // slice; dim also for (un)squeeze
};

Tensor permute_raw(const Tensor& v, const Shape& p) {
  Shape sh(p.size()), st(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    sh[i] = v.shape()[size_t(p[i])];
    st[i] = v.strides()[size_t(p[i])];
  }
  return make_view(v, sh, st, v.offset());
}

Tensor slice_raw(const Tensor& v, const ViewAttrs& a) {
  Shape sh = v.shape(), st = v.strides();
  sh[size_t(a.dim)] = a.len;
  int64_t off = v.offset() + a.start * st[size_t(a.dim)];
  st[size_t(a.dim)] *= a.step;
  return make_view(v, sh, st, off);
}

Tensor unsqueeze_raw(const Tensor& v, const ViewAttrs& a) {
  Shape st = v.strides();
  int64_t d = a.dim;
  st.insert(st.begin() + d, d < v.dim() ? v.strides()[size_t(d)] * v.shape()[size_t(d)] : 1);
  return make_view(v, a.shape, st, v.offset());
}

Tensor squeeze_raw(const Tensor& v, const ViewAttrs& a) {
  Shape st = v.strides();
  st.erase(st.begin() + a.dim);
  return make_view(v, a.shape, st, v.offset());
}

using ViewOp = Primitive<ViewAttrs>;
using ViewCall = OpCall<ViewAttrs>;
using RawView = Tensor (*)(const Tensor&, const ViewAttrs&);
using ViewBack = Tensor (*)(const Tensor& g, const ViewCall& c);

struct ViewPrims;
const ViewPrims& prims();

// A view that applies to any strides, whose JVP is the same view of the tangent. The kernel runs on
// every device (a view copies nothing).
ViewOp view_primitive(const char* name, RawView raw, ViewBack back, const ViewOp* self_for_jvp(const ViewPrims&)) {
  auto k = [raw](const Args& x, const ViewAttrs& a) { return KernelOut(raw(x[0], a)); };
  return ViewOp(name)
      .all_devices(k)
      .dtypes({DType::Float32, DType::Float64, DType::Int64, DType::BFloat16, DType::Float16})
      .saves({}, false)
      .vjp([back](const Tensor& g, const ViewCall& c) { return Grads{back(g, c)}; })
      .jvp([self_for_jvp](const Args& t, const ViewCall& c) { return (*self_for_jvp(prims()))({t[0]}, c.attrs); });
}

struct ViewPrims {
  // A tangent need not be contiguous where x is (copy's JVP passes strided tangents on), so view's
  // JVP reshapes.
  ViewOp view = [] {
    auto k = [](const Args& x, const ViewAttrs& a) {
      Shape strides;
      EMBER_CHECK(view_strides(x[0], a.shape, strides), "view: no strides view ", to_string(x[0].shape()), " as ",
                  to_string(a.shape));  // view() checked this already
      return KernelOut(make_view(x[0], a.shape, strides, x[0].offset()));
    };
    return ViewOp("view")
        .all_devices(k)
        .dtypes({DType::Float32, DType::Float64, DType::Int64, DType::BFloat16, DType::Float16})
        .saves({}, false)
        .vjp([](const Tensor& g, const ViewCall& c) { return Grads{reshape(g, c.in_shape(0))}; })
        .jvp([](const Args& t, const ViewCall& c) { return reshape(t[0], c.attrs.shape); });
  }();
  ViewOp permute = view_primitive(
      "permute", [](const Tensor& v, const ViewAttrs& a) { return permute_raw(v, a.shape); },
      [](const Tensor& g, const ViewCall& c) { return ember::permute(g, c.attrs.inv); },
      [](const ViewPrims& p) { return &p.permute; });
  ViewOp slice = view_primitive(
      "slice", slice_raw,
      [](const Tensor& g, const ViewCall& c) {
        return slice_backward(g, c.in_shape(0), c.attrs.dim, c.attrs.start, c.attrs.step);
      },
      [](const ViewPrims& p) { return &p.slice; });
  ViewOp expand = view_primitive(
      "expand",
      [](const Tensor& v, const ViewAttrs& a) {
        return make_view(v, a.shape, broadcast_strides(v.shape(), v.strides(), a.shape), v.offset());
      },
      [](const Tensor& g, const ViewCall& c) { return sum_to(g, c.in_shape(0)); },
      [](const ViewPrims& p) { return &p.expand; });
  ViewOp unsqueeze = view_primitive(
      "unsqueeze", unsqueeze_raw, [](const Tensor& g, const ViewCall& c) { return reshape(g, c.in_shape(0)); },
      [](const ViewPrims& p) { return &p.unsqueeze; });
  ViewOp squeeze = view_primitive(
      "squeeze", squeeze_raw, [](const Tensor& g, const ViewCall& c) { return reshape(g, c.in_shape(0)); },
      [](const ViewPrims& p) { return &p.squeeze; });
};

const ViewPrims& prims() {
  static const ViewPrims p;
  return p;
}

}  // namespace

void declare_view_ops() { prims(); }

Tensor view(const Tensor& x, const Shape& shape) {
  EMBER_CHECK(x.defined(), "view: input is undefined");
  Shape s = infer_shape(shape, x.numel(), x, "view");
  Shape strides;
  EMBER_CHECK(view_strides(x, s, strides), "view: the tensor of shape ", to_string(x.shape()), " and strides ",
              to_string(x.strides()), " cannot be viewed as ", to_string(s),
              " without a copy (it would merge dimensions that are not contiguous with each other); use reshape(), "
              "which copies only then, or contiguous() first");
  ViewAttrs a;
  a.shape = s;
  return prims().view({x}, a);
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  EMBER_CHECK(x.defined(), "reshape: input is undefined");
  Shape s = infer_shape(shape, x.numel(), x, "reshape");
  if (s == x.shape()) return x;
  Shape strides;
  return view(view_strides(x, s, strides) ? x : x.contiguous(), s);  // a copy only when no view exists
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  EMBER_CHECK(x.defined(), "transpose: input is undefined");
  int64_t n = x.dim();
  int64_t a = wrap_dim(d0, n, "transpose"), b = wrap_dim(d1, n, "transpose");
  if (n == 0) return x;  // dims 0 and -1 both name the single "dimension" of a 0-d tensor
  Shape perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[size_t(a)], perm[size_t(b)]);
  return permute(x, perm);
}

Tensor permute(const Tensor& x, const Shape& dims) {
  EMBER_CHECK(x.defined(), "permute: input is undefined");
  int64_t n = x.dim();
  EMBER_CHECK(int64_t(dims.size()) == n, "permute: got ", dims.size(), " dims ", to_string(dims),
              " for a tensor of shape ", to_string(x.shape()));
  Shape p(dims.size()), inv(dims.size());
  std::vector<bool> seen(size_t(n), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    p[i] = wrap_dim(dims[i], n, "permute");
    EMBER_CHECK(!seen[size_t(p[i])], "permute: dim ", p[i], " repeats in ", to_string(dims));
    seen[size_t(p[i])] = true;
    inv[size_t(p[i])] = int64_t(i);
  }
  ViewAttrs a;
  a.shape = p;
  a.inv = inv;
  return prims().permute({x}, a);
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  EMBER_CHECK(x.defined(), "slice: input is undefined");
  int64_t d = wrap_dim(dim, x.dim(), "slice");
  EMBER_CHECK(x.dim() > 0, "slice: cannot slice a 0-d tensor");
  EMBER_CHECK(step > 0, "slice: step must be positive, got ", step);
  int64_t n = x.shape()[size_t(d)];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  int64_t len = (end - start + step - 1) / step;
  ViewAttrs a;
  a.dim = d;
  a.start = start;
  a.step = step;
  a.len = len;
  return prims().slice({x}, a);
}

Tensor expand(const Tensor& x, const Shape& shape) {
  EMBER_CHECK(x.defined(), "expand: input is undefined");
  EMBER_CHECK(shape.size() >= x.shape().size(), "expand: cannot expand shape ", to_string(x.shape()), " to ",
              to_string(shape), " (fewer dimensions)");
  size_t lead = shape.size() - x.shape().size();
  Shape target = shape;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t have = i < lead ? 1 : x.shape()[i - lead];
    if (target[i] == -1 && i >= lead) target[i] = have;
    EMBER_CHECK(target[i] >= 0, "expand: cannot expand shape ", to_string(x.shape()), " to ", to_string(shape),
                " (size ", target[i], " at dimension ", i, "; -1 may only keep an existing dimension)");
    EMBER_CHECK(have == target[i] || have == 1, "expand: cannot expand shape ", to_string(x.shape()), " to ",
                to_string(shape), " (dimension ", i, " is ", have, ", not 1)");
  }
  if (target == x.shape()) return x;
  ViewAttrs a;
  a.shape = target;
  return prims().expand({x}, a);
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.defined(), "unsqueeze: input is undefined");
  int64_t d = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  Shape s = x.shape();
  s.insert(s.begin() + d, 1);
  ViewAttrs a;
  a.dim = d;
  a.shape = s;
  return prims().unsqueeze({x}, a);
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.defined(), "squeeze: input is undefined");
  int64_t d = wrap_dim(dim, x.dim(), "squeeze");
  if (x.dim() == 0) return x;
  EMBER_CHECK(x.shape()[size_t(d)] == 1, "squeeze: dim ", d, " of shape ", to_string(x.shape()), " is not 1");
  Shape s = x.shape();
  s.erase(s.begin() + d);
  ViewAttrs a;
  a.dim = d;
  a.shape = s;
  return prims().squeeze({x}, a);
}

}  // namespace ember

// View primitives: each builds a TensorImpl over the same storage with new shape/strides/offset.
#include <numeric>

#include "framework/autograd/trace.h"
#include "framework/strided.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_ops.h"

namespace ember {
namespace {

Tensor make_view(const Tensor& x, Shape shape, Shape strides, int64_t offset) {
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

// Records a view-like primitive whose VJP and JVP are other view-like ops. `fwd` builds the raw view;
// the recorded forward goes through traced_view again, so that a value boxed in older traces is
// recorded there too: that is what makes higher-order derivatives flow through views. `tangent`
// maps an input tangent to the output tangent with public (recorded) ops.
template <class Fwd, class Back, class Tangent>
Tensor traced_view(const char* name, const Tensor& x, Fwd fwd, Back back, Tangent tangent) {
  EMBER_CHECK(x.defined(), name, ": input is undefined");
  auto r = autograd::record(
      name, {x}, [&](const autograd::Args& a) { return traced_view(name, a[0], fwd, back, tangent); },
      [&](const Tensor&, const autograd::Args&) -> autograd::VjpFn {
        return [back](const Tensor& g, int) { return back(g); };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args&) { return tangent(t[0]); });
  return r ? *r : fwd(x);
}

// For views whose raw `fwd` works on any strides (everything but view()), the tangent takes the same view.
template <class Fwd, class Back>
Tensor traced_view(const char* name, const Tensor& x, Fwd fwd, Back back) {
  return traced_view(name, x, fwd, back, [name, fwd, back](const Tensor& t) { return traced_view(name, t, fwd, back); });
}

}  // namespace

Tensor view(const Tensor& x, const Shape& shape) {
  EMBER_CHECK(x.defined(), "view: input is undefined");
  Shape s = infer_shape(shape, x.numel(), x, "view");
  EMBER_CHECK(x.is_contiguous(), "view: the tensor of shape ", to_string(x.shape()),
              " is not contiguous; use reshape() (which copies) or contiguous() first");
  Shape in = x.shape();
  // A tangent need not be contiguous where x is (copy's JVP passes strided tangents on), so it is reshaped.
  return traced_view(
      "view", x, [s](const Tensor& v) { return make_view(v, s, contiguous_strides(s), v.offset()); },
      [in](const Tensor& g) { return reshape(g, in); }, [s](const Tensor& t) { return reshape(t, s); });
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  EMBER_CHECK(x.defined(), "reshape: input is undefined");
  Shape s = infer_shape(shape, x.numel(), x, "reshape");
  if (s == x.shape()) return x;
  return view(x.contiguous(), s);
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
  return traced_view(
      "permute", x,
      [p](const Tensor& v) {
        Shape sh(p.size()), st(p.size());
        for (size_t i = 0; i < p.size(); ++i) {
          sh[i] = v.shape()[size_t(p[i])];
          st[i] = v.strides()[size_t(p[i])];
        }
        return make_view(v, sh, st, v.offset());
      },
      [inv](const Tensor& g) { return permute(g, inv); });
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
  Shape in = x.shape();
  return traced_view(
      "slice", x,
      [d, start, step, len](const Tensor& v) {
        Shape sh = v.shape(), st = v.strides();
        sh[size_t(d)] = len;
        int64_t off = v.offset() + start * st[size_t(d)];
        st[size_t(d)] *= step;
        return make_view(v, sh, st, off);
      },
      [in, d, start, step](const Tensor& g) { return slice_backward(g, in, d, start, step); });
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
  Shape in = x.shape();
  return traced_view(
      "expand", x,
      [target](const Tensor& v) {
        return make_view(v, target, broadcast_strides(v.shape(), v.strides(), target), v.offset());
      },
      [in](const Tensor& g) { return sum_to(g, in); });
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.defined(), "unsqueeze: input is undefined");
  int64_t d = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  Shape s = x.shape();
  s.insert(s.begin() + d, 1);
  Shape in = x.shape();
  return traced_view(
      "unsqueeze", x,
      [d, s](const Tensor& v) {
        Shape st = v.strides();
        st.insert(st.begin() + d, d < v.dim() ? v.strides()[size_t(d)] * v.shape()[size_t(d)] : 1);
        return make_view(v, s, st, v.offset());
      },
      [in](const Tensor& g) { return reshape(g, in); });
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.defined(), "squeeze: input is undefined");
  int64_t d = wrap_dim(dim, x.dim(), "squeeze");
  if (x.dim() == 0) return x;
  EMBER_CHECK(x.shape()[size_t(d)] == 1, "squeeze: dim ", d, " of shape ", to_string(x.shape()), " is not 1");
  Shape s = x.shape(), in = x.shape();
  s.erase(s.begin() + d);
  return traced_view(
      "squeeze", x,
      [d, s](const Tensor& v) {
        Shape st = v.strides();
        st.erase(st.begin() + d);
        return make_view(v, s, st, v.offset());
      },
      [in](const Tensor& g) { return reshape(g, in); });
}

}  // namespace ember

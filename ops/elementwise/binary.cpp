// Binary primitives with broadcasting, comparisons, where/masked_fill and casts.
#include <cmath>

#include "framework/autograd/trace.h"
#include "ops/elementwise/binary_kinds.h"
#include "ops/elementwise/cpu/loops.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& shape);  // cuda/binary.cu
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, const Shape& shape);
Tensor cast(const Tensor& x, DType dtype);
}  // namespace cuda
#endif

namespace {

void check_pair(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), op, ": an operand is undefined");
  EMBER_CHECK(a.dtype() == b.dtype(), op, ": dtype mismatch, ", a.dtype(), to_string(a.shape()), " vs ", b.dtype(),
              to_string(b.shape()), " (convert one with .to(dtype))");
  EMBER_CHECK(a.device() == b.device(), op, ": device mismatch, ", a.device(), " vs ", b.device());
}

}  // namespace

namespace {
// One loop instantiation per op, so that the compiler can vectorise each.
template <class T>
Tensor binary_cpu(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& shape) {
  switch (op) {
#define EMBER_CASE(K) \
  case BinaryOp::K:   \
    return cpu::binary_loop<T>(a, b, shape, a.dtype(), [](T x, T y) { return apply_binary(BinaryOp::K, x, y); });
    EMBER_CASE(Add) EMBER_CASE(Sub) EMBER_CASE(Mul) EMBER_CASE(Div) EMBER_CASE(Pow) EMBER_CASE(Max)
    EMBER_CASE(Min) EMBER_CASE(Gt) EMBER_CASE(Ge) EMBER_CASE(Lt) EMBER_CASE(Le) EMBER_CASE(Eq)
#undef EMBER_CASE
  }
  throw Error("binary op: unknown kind");
}
}  // namespace

Tensor binary_kernel(BinaryOp op, const Tensor& a, const Tensor& b) {
  Shape shape = broadcast_shapes(a.shape(), b.shape(), binary_name(op));
#ifdef EMBER_CUDA
  if (a.device() == Device::CUDA) return cuda::binary(op, a, b, shape);
#endif
  return EMBER_DISPATCH_ALL(a.dtype(), binary_name(op), [&] {
    return binary_cpu<scalar_t>(op, a, b, shape);
  });
}

namespace {

// Sum of the defined terms, broadcast to `shape`; undefined when none is.
Tensor tangent_sum(std::initializer_list<Tensor> terms, const Shape& shape) {
  Tensor acc;
  for (const Tensor& t : terms)
    if (t.defined()) acc = acc.defined() ? acc + t : t;
  if (acc.defined() && acc.shape() != shape) acc = acc.expand(shape);
  return acc;
}

// Which of a, b and ans a binary op's VJP reads. The recorded node keeps only those alive: an add
// that kept its operands would hold every intermediate of a network until the backward pass.
enum Saves : unsigned { kSavesNone = 0, kSavesA = 1, kSavesB = 2, kSavesAns = 4 };

// Records a binary primitive: `vjp(g, i, a, b, ans)` and `jvp(ta, tb, a, b, ans)` where ta or tb may
// be undefined; in vjp, an operand not named in `saves` is undefined. VJP results are summed back
// to each operand's shape here, once for every op.
template <class Vjp, class Jvp>
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, unsigned saves, Vjp vjp, Jvp jvp) {
  const char* name = binary_name(op);
  check_pair(name, a, b);
  auto r = autograd::record(
      name, {a, b}, [&](const autograd::Args& x) { return binary(op, x[0], x[1], saves, vjp, jvp); },
      [&](const Tensor& ans, const autograd::Args& x) -> autograd::VjpFn {
        // An operand's shape is kept only where it was broadcast (else it is the cotangent's shape).
        bool a_full = x[0].shape() == ans.shape(), b_full = x[1].shape() == ans.shape();
        return [sa = saves & kSavesA ? x[0] : Tensor(), sb = saves & kSavesB ? x[1] : Tensor(),
                sans = saves & kSavesAns ? ans : Tensor(), shape_a = a_full ? Shape() : x[0].shape(),
                shape_b = b_full ? Shape() : x[1].shape(), a_full, b_full, vjp](const Tensor& g, int i) {
          Tensor gi = vjp(g, i, sa, sb, sans);
          return (i == 0 ? a_full : b_full) ? gi : sum_to(gi, i == 0 ? shape_a : shape_b);
        };
      },
      [&](const autograd::Args& t, const Tensor& ans, const autograd::Args& x) {
        return jvp(t[0], t[1], x[0], x[1], ans);
      });
  return r ? *r : binary_kernel(op, a, b);
}

Tensor comparison(BinaryOp op, const Tensor& a, const Tensor& b) {
  check_pair(binary_name(op), a, b);
  return binary_kernel(op, a.detach(), b.detach());
}

}  // namespace

Tensor scalar_like(const Tensor& x, double v) { return scalar(v, x.dtype(), x.device()); }

Tensor add(const Tensor& a, const Tensor& b) {
  return binary(
      BinaryOp::Add, a, b, kSavesNone, [](const Tensor& g, int, const Tensor&, const Tensor&, const Tensor&) { return g; },
      [](const Tensor& ta, const Tensor& tb, const Tensor&, const Tensor&, const Tensor& y) {
        return tangent_sum({ta, tb}, y.shape());
      });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  return binary(
      BinaryOp::Sub, a, b, kSavesNone, [](const Tensor& g, int i, const Tensor&, const Tensor&, const Tensor&) { return i == 0 ? g : -g; },
      [](const Tensor& ta, const Tensor& tb, const Tensor&, const Tensor&, const Tensor& y) {
        return tangent_sum({ta, tb.defined() ? -tb : tb}, y.shape());
      });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return binary(
      BinaryOp::Mul, a, b, kSavesA | kSavesB,
      [](const Tensor& g, int i, const Tensor& x, const Tensor& y, const Tensor&) { return i == 0 ? g * y : g * x; },
      [](const Tensor& ta, const Tensor& tb, const Tensor& x, const Tensor& y, const Tensor& ans) {
        return tangent_sum({ta.defined() ? ta * y : ta, tb.defined() ? x * tb : tb}, ans.shape());
      });
}

Tensor div(const Tensor& a, const Tensor& b) {
  return binary(
      BinaryOp::Div, a, b, kSavesB | kSavesAns,
      [](const Tensor& g, int i, const Tensor&, const Tensor& y, const Tensor& ans) {
        return i == 0 ? g / y : -(g * ans) / y;
      },
      [](const Tensor& ta, const Tensor& tb, const Tensor&, const Tensor& y, const Tensor& ans) {
        return tangent_sum({ta.defined() ? ta / y : ta, tb.defined() ? -(tb * ans) / y : tb}, ans.shape());
      });
}

Tensor pow(const Tensor& a, const Tensor& b) {
  // d/da a^b = b a^(b-1); d/db a^b = log(a) a^b
  return binary(
      BinaryOp::Pow, a, b, kSavesA | kSavesB | kSavesAns,
      [](const Tensor& g, int i, const Tensor& x, const Tensor& y, const Tensor& ans) {
        return i == 0 ? g * y * pow(x, y - 1.0) : g * log(x) * ans;
      },
      [](const Tensor& ta, const Tensor& tb, const Tensor& x, const Tensor& y, const Tensor& ans) {
        return tangent_sum({ta.defined() ? ta * y * pow(x, y - 1.0) : ta, tb.defined() ? tb * log(x) * ans : tb},
                           ans.shape());
      });
}

Tensor pow(const Tensor& a, double exponent) { return pow(a, scalar_like(a, exponent)); }

Tensor maximum(const Tensor& a, const Tensor& b) {
  return binary(
      BinaryOp::Max, a, b, kSavesA | kSavesB,
      [](const Tensor& g, int i, const Tensor& x, const Tensor& y, const Tensor&) {
        Tensor m = ge(x, y);  // ties go to a
        return i == 0 ? g * m : g * (1.0 - m);
      },
      [](const Tensor& ta, const Tensor& tb, const Tensor& x, const Tensor& y, const Tensor& ans) {
        Tensor m = ge(x, y);
        return tangent_sum({ta.defined() ? ta * m : ta, tb.defined() ? tb * (1.0 - m) : tb}, ans.shape());
      });
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  return binary(
      BinaryOp::Min, a, b, kSavesA | kSavesB,
      [](const Tensor& g, int i, const Tensor& x, const Tensor& y, const Tensor&) {
        Tensor m = le(x, y);
        return i == 0 ? g * m : g * (1.0 - m);
      },
      [](const Tensor& ta, const Tensor& tb, const Tensor& x, const Tensor& y, const Tensor& ans) {
        Tensor m = le(x, y);
        return tangent_sum({ta.defined() ? ta * m : ta, tb.defined() ? tb * (1.0 - m) : tb}, ans.shape());
      });
}

Tensor gt(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Ge, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Le, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Eq, a, b); }

namespace {
Tensor where_kernel(const Tensor& cond, const Tensor& a, const Tensor& b, const Shape& shape) {
#ifdef EMBER_CUDA
  if (a.device() == Device::CUDA) return cuda::where(cond, a, b, shape);
#endif
  // Nonzero means true, decided in the condition's own dtype: a plain cast to the data's dtype would
  // turn 0.5 into int64 0, or 1e-50 into float32 0, and make those conditions false.
  Tensor c = cond.detach();
  if (c.dtype() != a.dtype()) c = cast(1.0 - eq(c, scalar_like(c, 0.0)), a.dtype());
  return EMBER_DISPATCH_ALL(a.dtype(), "where", [&] {
    Tensor out = empty(shape, a.dtype());
    scalar_t* o = out.data<scalar_t>();
    const scalar_t* pc = static_cast<const scalar_t*>(c.impl()->storage->data());
    const scalar_t* pa = static_cast<const scalar_t*>(a.impl()->storage->data());
    const scalar_t* pb = static_cast<const scalar_t*>(b.impl()->storage->data());
    Shape sc = broadcast_strides(c.shape(), c.strides(), shape), sa = broadcast_strides(a.shape(), a.strides(), shape),
          sb = broadcast_strides(b.shape(), b.strides(), shape), so = out.strides();
    int64_t ic = sc.empty() ? 0 : sc.back(), ia = sa.empty() ? 0 : sa.back(), ib = sb.empty() ? 0 : sb.back();
    for_each_row<4>(shape, {&sc, &sa, &sb, &so}, {c.offset(), a.offset(), b.offset(), 0},
                    [&](const std::array<int64_t, 4>& off, int64_t len) {
                      for (int64_t i = 0; i < len; ++i)
                        o[off[3] + i] = pc[off[0] + i * ic] != scalar_t(0) ? pa[off[1] + i * ia] : pb[off[2] + i * ib];
                    });
    return out;
  });
}
}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_pair("where", a, b);
  EMBER_CHECK(cond.defined() && cond.device() == a.device(), "where: condition must be defined and on ", a.device());
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor c = cond.detach();
  auto r = autograd::record(
      "where", {a, b}, [&](const autograd::Args& x) { return where(c, x[0], x[1]); },
      [&](const Tensor&, const autograd::Args& x) -> autograd::VjpFn {
        return [c, sa = x[0].shape(), sb = x[1].shape()](const Tensor& g, int i) {
          Tensor z = zeros({}, g.dtype(), g.device());
          return i == 0 ? sum_to(where(c, g, z), sa) : sum_to(where(c, z, g), sb);
        };
      },
      [&](const autograd::Args& t, const Tensor& ans, const autograd::Args&) {
        Tensor z = zeros({}, ans.dtype(), ans.device());
        return where(c, t[0].defined() ? t[0] : z, t[1].defined() ? t[1] : z).expand(ans.shape());
      });
  return r ? *r : where_kernel(c, a, b, shape);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  EMBER_CHECK(x.defined() && mask.defined(), "masked_fill: undefined operand");
  Shape shape = broadcast_shapes(x.shape(), mask.shape(), "masked_fill");
  EMBER_CHECK(shape == x.shape(), "masked_fill: mask of shape ", to_string(mask.shape()),
              " must broadcast to the input's shape ", to_string(x.shape()));
  return where(mask, scalar_like(x, value), x);
}

Tensor cast(const Tensor& x, DType dtype) {
  EMBER_CHECK(x.defined(), "cast: input is undefined");
  if (x.dtype() == dtype) return x;
  if (dtype == DType::Int64 || x.dtype() == DType::Int64) {
    Tensor raw = x.detach();  // integer values carry no gradient
#ifdef EMBER_CUDA
    if (raw.device() == Device::CUDA) return cuda::cast(raw, dtype);
#endif
    check_cpu(raw, "cast");
    return EMBER_DISPATCH_ALL(raw.dtype(), "cast", [&] {
      using In = scalar_t;
      return EMBER_DISPATCH_ALL(dtype, "cast", [&] {
        return cpu::unary_loop<In, scalar_t>(raw, dtype, [](In v) { return scalar_t(v); });
      });
    });
  }
  DType from = x.dtype();
  auto r = autograd::record(
      "cast", {x}, [&](const autograd::Args& a) { return cast(a[0], dtype); },
      [&](const Tensor&, const autograd::Args&) -> autograd::VjpFn {
        return [from](const Tensor& g, int) { return cast(g, from); };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args&) { return cast(t[0], dtype); });
  if (r) return *r;
#ifdef EMBER_CUDA
  if (x.device() == Device::CUDA) return cuda::cast(x, dtype);
#endif
  check_cpu(x, "cast");
  return EMBER_DISPATCH_FLOAT(x.dtype(), "cast", [&] {
    using In = scalar_t;
    return EMBER_DISPATCH_FLOAT(dtype, "cast", [&] {
      return cpu::unary_loop<In, scalar_t>(x, dtype, [](In v) { return scalar_t(v); });
    });
  });
}

}  // namespace ember

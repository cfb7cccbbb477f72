// Binary primitives with broadcasting, comparisons, where/masked_fill and casts.
#include <atomic>
#include <cmath>

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/elementwise/binary_kinds.h"
#include "ops/elementwise/cpu/half_cast.h"
#include "ops/elementwise/cpu/loops.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {
Tensor cast_kernel(const Tensor& x, DType dtype);

// A Bool operand beside a numeric one takes the other's dtype (true = 1), as in PyTorch, so that
// `mask * x` needs no cast; two Bool operands stay Bool where `both_bool` allows it (comparisons,
// where's data) and are an error for arithmetic, whose bool meaning would be a guess.
std::pair<Tensor, Tensor> promote_bool(const char* op, const Tensor& a, const Tensor& b, bool both_bool) {
  EMBER_CHECK(a.defined() && b.defined(), op, ": an operand is undefined");
  const bool ba = a.dtype() == DType::Bool, bb = b.dtype() == DType::Bool;
  if (ba && bb) {
    EMBER_CHECK(both_bool, op, ": both operands are bool, and ", op,
                " is arithmetic; use logical_and / logical_or / logical_xor, or convert one with .to(DType::Float32)");
    return {a, b};
  }
  if (ba) return {cast_kernel(a.detach(), b.dtype()), b};
  if (bb) return {a, cast_kernel(b.detach(), a.dtype())};
  return {a, b};
}

// A 16-bit float beside a wider float takes the wider dtype, and bfloat16 beside float16 meets in
// float32, as in PyTorch; other pairs are returned as they are (check_pair judges them).
std::pair<Tensor, Tensor> promote_half(const Tensor& a, const Tensor& b) {
  const DType da = a.dtype(), db = b.dtype();
  if (da == db || !is_floating(da) || !is_floating(db) || !(is_half(da) || is_half(db))) return {a, b};
  DType to = is_half(da) && is_half(db) ? DType::Float32 : is_half(da) ? db : da;
  return {cast(a, to), cast(b, to)};
}

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
    EMBER_CASE(Min)
#undef EMBER_CASE
    case BinaryOp::Gt: case BinaryOp::Ge: case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Eq: case BinaryOp::Ne:
      break;  // compare_cpu: their result is Bool
  }
  throw Error(str(binary_name(op), ": not an arithmetic kind"));
}

template <class T>
Tensor compare_cpu(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& shape) {
  switch (op) {
#define EMBER_CASE(K) \
  case BinaryOp::K:   \
    return cpu::binary_loop<T, bool>(a, b, shape, DType::Bool, [](T x, T y) { return apply_binary(BinaryOp::K, x, y) != T(0); });
    EMBER_CASE(Gt) EMBER_CASE(Ge) EMBER_CASE(Lt) EMBER_CASE(Le) EMBER_CASE(Eq) EMBER_CASE(Ne)
#undef EMBER_CASE
    case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Pow:
    case BinaryOp::Max: case BinaryOp::Min:
      break;
  }
  throw Error(str(binary_name(op), ": not a comparison"));
}

// The CUDA kernels compute comparisons as 1 or 0 in the operands' dtype and know no Bool
// arithmetic: Bool operands go in as int64 and the result comes back as Bool.
Tensor compare_cuda(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& shape) {
  Tensor x = a.dtype() == DType::Bool ? cuda_kernels::cast(a, DType::Int64) : a;
  Tensor y = b.dtype() == DType::Bool ? cuda_kernels::cast(b, DType::Int64) : b;
  return cuda_kernels::cast(cuda_kernels::binary(op, x, y, shape), DType::Bool);
}
}  // namespace

Tensor binary_kernel(BinaryOp op, const Tensor& a, const Tensor& b) {
  if (is_half(a.dtype()) && a.device() == Device::CPU) {
    // Widened to float32, computed there and rounded once, as PyTorch's CPU kernels do.
    Tensor r = binary_kernel(op, cpu::cast_half(a, DType::Float32), cpu::cast_half(b, DType::Float32));
    return is_comparison(op) ? r : cpu::cast_half(r, a.dtype());
  }
  Shape shape = broadcast_shapes(a.shape(), b.shape(), binary_name(op));
  if (is_comparison(op)) {
    if (a.device() == Device::CUDA) return compare_cuda(op, a, b, shape);
    return EMBER_DISPATCH_ALL_AND_BOOL(a.dtype(), binary_name(op), [&] {
      return compare_cpu<scalar_t>(op, a, b, shape);
    });
  }
  if (a.device() == Device::CUDA) return cuda_kernels::binary(op, a, b, shape);
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

// Declares a binary primitive: `vjp(g, i, a, b, ans)` and `jvp(ta, tb, a, b, ans)` where ta or tb may
// be undefined. The node keeps only the operands in `saved` (and ans where `saves_ans`): an add
// that kept its operands would hold every intermediate of a network until the backward pass. VJP
// results are summed back to each operand's shape here, once for every op.
template <class Vjp, class Jvp>
Primitive<> binary_primitive(BinaryOp op, std::vector<int> saved, bool saves_ans, Vjp vjp, Jvp jvp) {
  Primitive<> p(binary_name(op));
  p.all_devices([op](const Args& x, const NoAttrs&) { return binary_kernel(op, x[0], x[1]); })
      .dtypes({DType::Float32, DType::Float64, DType::Int64, DType::BFloat16, DType::Float16})
      .saves(saved, saves_ans)
      .vjp([vjp](const Tensor& g, const OpCall<>& c) {
        Grads out(2);
        for (size_t i = 0; i < 2; ++i) {
          if (!c.needs(i)) continue;
          Tensor gi = vjp(g, int(i), c.in[0], c.in[1], c.out);
          out[i] = gi.shape() == c.in_shape(i) ? gi : sum_to(gi, c.in_shape(i));
        }
        return out;
      })
      .jvp([jvp](const Args& t, const OpCall<>& c) { return jvp(t[0], t[1], c.in[0], c.in[1], c.out); });
  return p;
}

Tensor where_kernel(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  // Nonzero means true, decided in the condition's own dtype: a plain cast to the data's dtype would
  // turn 0.5 into int64 0, or 1e-50 into float32 0, and make those conditions false.
  Tensor c = cond.detach();
  if (c.dtype() != DType::Bool) c = binary_kernel(BinaryOp::Ne, c, scalar_like(c, 0.0));
  if (a.device() == Device::CUDA) return cuda_kernels::where(c, a, b, shape);
  return EMBER_DISPATCH_ALL_AND_BOOL(a.dtype(), "where", [&] {
    Tensor out = empty(shape, a.dtype());
    scalar_t* o = out.data<scalar_t>();
    const bool* pc = static_cast<const bool*>(c.impl()->storage->data());
    const scalar_t* pa = static_cast<const scalar_t*>(a.impl()->storage->data());
    const scalar_t* pb = static_cast<const scalar_t*>(b.impl()->storage->data());
    Shape sc = broadcast_strides(c.shape(), c.strides(), shape), sa = broadcast_strides(a.shape(), a.strides(), shape),
          sb = broadcast_strides(b.shape(), b.strides(), shape), so = out.strides();
    int64_t ic = sc.empty() ? 0 : sc.back(), ia = sa.empty() ? 0 : sa.back(), ib = sb.empty() ? 0 : sb.back();
    for_each_row<4>(shape, {&sc, &sa, &sb, &so}, {c.offset(), a.offset(), b.offset(), 0},
                    [&](const std::array<int64_t, 4>& off, int64_t len) {
                      for (int64_t i = 0; i < len; ++i)
                        o[off[3] + i] = pc[off[0] + i * ic] ? pa[off[1] + i * ia] : pb[off[2] + i * ib];
                    });
    return out;
  });
}

Tensor cast_kernel(const Tensor& x, DType dtype) {
  if (is_half(x.dtype()) || is_half(dtype)) {
    // No CUDA conversion kernel for the 16-bit floats yet: a CUDA tensor converts on the host.
    if (x.device() == Device::CUDA) return cpu::cast_half(x.to(Device::CPU), dtype).to(Device::CUDA);
    return cpu::cast_half(x, dtype);
  }
  if (x.device() == Device::CUDA) return cuda_kernels::cast(x, dtype);
  check_cpu(x, "cast");
  // A float that int64 cannot hold (NaN, an infinity, |v| >= 2^63) is an error, not a silent
  // INT64_MIN: flagged inside the loop (which may run on several threads), raised after it.
  std::atomic<bool> unrepresentable{false};
  Tensor out = EMBER_DISPATCH_ALL_AND_BOOL(x.dtype(), "cast", [&] {
    using In = scalar_t;
    return EMBER_DISPATCH_ALL_AND_BOOL(dtype, "cast", [&] {
      return cpu::unary_loop<In, scalar_t>(x, dtype, [&unrepresentable](In v) {
        if constexpr (std::is_floating_point_v<In> && std::is_same_v<scalar_t, int64_t>) {
          if (!(v >= In(-9223372036854775808.0) && v < In(9223372036854775808.0))) {
            unrepresentable.store(true, std::memory_order_relaxed);
            return scalar_t(0);
          }
        }
        return scalar_t(v);
      });
    });
  });
  EMBER_CHECK(!unrepresentable.load(), "cast: a ", x.dtype(), " value is NaN, infinite or outside int64's range",
              " (expected finite values in [-2^63, 2^63) to cast to int64)");
  return out;
}

struct CastAttrs {
  DType to;
};

Tensor comparison(BinaryOp op, const Tensor& a_in, const Tensor& b_in) {
  EMBER_CHECK(a_in.defined() && b_in.defined(), binary_name(op), ": an operand is undefined");
  auto [a, b] = promote_half(a_in.detach(), b_in.detach());
  auto [x, y] = promote_bool(binary_name(op), a, b, /*both_bool=*/true);
  check_pair(binary_name(op), x, y);
  return binary_kernel(op, x.detach(), y.detach());
}

// The share of maximum's (op Gt) or minimum's (op Lt) gradient that goes to the first operand: 1
// where it wins, 1/2 on a tie (PyTorch's rule: the derivative is the mean of the one-sided ones),
// 0 where it loses. A constant, as the choice is.
Tensor first_wins(BinaryOp op, const Tensor& x, const Tensor& y) {
  return cast(comparison(op, x, y), x.dtype()) + 0.5 * cast(comparison(BinaryOp::Eq, x, y), x.dtype());
}

}  // namespace

Tensor scalar_like(const Tensor& x, double v) { return scalar(v, x.dtype(), x.device()); }
Tensor scalar_operand(const Tensor& x, double v) {
  return scalar(v, x.dtype() == DType::Bool ? DType::Float32 : x.dtype(), x.device());
}

namespace {
struct BinaryPrims {
  Primitive<> add = binary_primitive(
      BinaryOp::Add, {}, false, [](const Tensor& g, int, const Tensor&, const Tensor&, const Tensor&) { return g; },
      [](const Tensor& ta, const Tensor& tb, const Tensor&, const Tensor&, const Tensor& y) {
        return tangent_sum({ta, tb}, y.shape());
      });
  Primitive<> sub = binary_primitive(
      BinaryOp::Sub, {}, false,
      [](const Tensor& g, int i, const Tensor&, const Tensor&, const Tensor&) { return i == 0 ? g : -g; },
      [](const Tensor& ta, const Tensor& tb, const Tensor&, const Tensor&, const Tensor& y) {
        return tangent_sum({ta, tb.defined() ? -tb : tb}, y.shape());
      });
  Primitive<> mul = binary_primitive(
      BinaryOp::Mul, {0, 1}, false,
      [](const Tensor& g, int i, const Tensor& x, const Tensor& y, const Tensor&) { return i == 0 ? g * y : g * x; },
      [](const Tensor& ta, const Tensor& tb, const Tensor& x, const Tensor& y, const Tensor& ans) {
        return tangent_sum({ta.defined() ? ta * y : ta, tb.defined() ? x * tb : tb}, ans.shape());
      });
  Primitive<> div = binary_primitive(
      BinaryOp::Div, {1}, true,
      [](const Tensor& g, int i, const Tensor&, const Tensor& y, const Tensor& ans) {
        return i == 0 ? g / y : -(g * ans) / y;
      },
      [](const Tensor& ta, const Tensor& tb, const Tensor&, const Tensor& y, const Tensor& ans) {
        return tangent_sum({ta.defined() ? ta / y : ta, tb.defined() ? -(tb * ans) / y : tb}, ans.shape());
      });
  // d/da a^b = b a^(b-1); d/db a^b = log(a) a^b
  Primitive<> pow = binary_primitive(
      BinaryOp::Pow, {0, 1}, true,
      [](const Tensor& g, int i, const Tensor& x, const Tensor& y, const Tensor& ans) {
        return i == 0 ? g * y * ember::pow(x, y - 1.0) : g * ember::log(x) * ans;
      },
      [](const Tensor& ta, const Tensor& tb, const Tensor& x, const Tensor& y, const Tensor& ans) {
        return tangent_sum(
            {ta.defined() ? ta * y * ember::pow(x, y - 1.0) : ta, tb.defined() ? tb * ember::log(x) * ans : tb},
            ans.shape());
      });
  Primitive<> maximum = binary_primitive(
      BinaryOp::Max, {0, 1}, false,
      [](const Tensor& g, int i, const Tensor& x, const Tensor& y, const Tensor&) {
        Tensor m = first_wins(BinaryOp::Gt, x, y);
        return i == 0 ? g * m : g * (1.0 - m);
      },
      [](const Tensor& ta, const Tensor& tb, const Tensor& x, const Tensor& y, const Tensor& ans) {
        Tensor m = first_wins(BinaryOp::Gt, x, y);
        return tangent_sum({ta.defined() ? ta * m : ta, tb.defined() ? tb * (1.0 - m) : tb}, ans.shape());
      });
  Primitive<> minimum = binary_primitive(
      BinaryOp::Min, {0, 1}, false,
      [](const Tensor& g, int i, const Tensor& x, const Tensor& y, const Tensor&) {
        Tensor m = first_wins(BinaryOp::Lt, x, y);
        return i == 0 ? g * m : g * (1.0 - m);
      },
      [](const Tensor& ta, const Tensor& tb, const Tensor& x, const Tensor& y, const Tensor& ans) {
        Tensor m = first_wins(BinaryOp::Lt, x, y);
        return tangent_sum({ta.defined() ? ta * m : ta, tb.defined() ? tb * (1.0 - m) : tb}, ans.shape());
      });
  // where(cond, a, b): cond (input 0) carries no gradient.
  Primitive<> where = Primitive<>("where")
                          .all_devices([](const Args& x, const NoAttrs&) { return where_kernel(x[0], x[1], x[2]); })
                          .saves({0}, false)
                          .vjp([](const Tensor& g, const OpCall<>& c) {
                            Tensor z = zeros({}, g.dtype(), g.device());
                            Grads out(3);
                            if (c.needs(1)) out[1] = sum_to(ember::where(c.in[0], g, z), c.in_shape(1));
                            if (c.needs(2)) out[2] = sum_to(ember::where(c.in[0], z, g), c.in_shape(2));
                            return out;
                          })
                          .jvp([](const Args& t, const OpCall<>& c) {
                            Tensor z = zeros({}, c.out.dtype(), c.out.device());
                            return ember::where(c.in[0], t[1].defined() ? t[1] : z, t[2].defined() ? t[2] : z)
                                .expand(c.out.shape());
                          });
  Primitive<CastAttrs> cast = Primitive<CastAttrs>("cast")
                                  .all_devices([](const Args& x, const CastAttrs& a) { return cast_kernel(x[0], a.to); })
                                  .dtypes({DType::Float32, DType::Float64, DType::Int64, DType::Bool,
                                           DType::BFloat16, DType::Float16})
                                  .saves({}, false)
                                  .vjp([](const Tensor& g, const OpCall<CastAttrs>& c) {
                                    return Grads{ember::cast(g, c.in_dtype(0))};
                                  })
                                  .jvp([](const Args& t, const OpCall<CastAttrs>& c) {
                                    return ember::cast(t[0], c.attrs.to);
                                  });
};

const BinaryPrims& prims() {
  static const BinaryPrims p;
  return p;
}

Tensor apply(const Primitive<>& p, const Tensor& a, const Tensor& b) {
  // The common case first: no Bool operand, no pair of tensor copies (this is every recorded add,
  // the engine's gradient sums included).
  if (a.defined() && b.defined() && a.dtype() != DType::Bool && b.dtype() != DType::Bool) {
    if (a.dtype() != b.dtype() && (is_half(a.dtype()) || is_half(b.dtype()))) {
      auto [x, y] = promote_half(a, b);
      check_pair(p.info().node_name, x, y);
      return p({x, y});
    }
    check_pair(p.info().node_name, a, b);
    return p({a, b});
  }
  auto [x, y] = promote_bool(p.info().node_name, a, b, /*both_bool=*/false);
  check_pair(p.info().node_name, x, y);
  return p({x, y});
}
}  // namespace

void declare_binary_ops() { prims(); }

Tensor add(const Tensor& a, const Tensor& b) { return apply(prims().add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return apply(prims().sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return apply(prims().mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return apply(prims().div, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return apply(prims().pow, a, b); }
Tensor pow(const Tensor& a, double exponent) { return pow(a, scalar_like(a, exponent)); }
Tensor maximum(const Tensor& a, const Tensor& b) { return apply(prims().maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return apply(prims().minimum, a, b); }

Tensor gt(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Ge, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Le, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return comparison(BinaryOp::Ne, a, b); }

Tensor where(const Tensor& cond, const Tensor& a_in, const Tensor& b_in) {
  auto [a, b] = promote_bool("where", a_in, b_in, /*both_bool=*/true);
  check_pair("where", a, b);
  EMBER_CHECK(cond.defined() && cond.device() == a.device(), "where: condition must be defined and on ", a.device());
  broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  return prims().where({cond.detach(), a, b});
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
  // Integer and bool values carry no gradient.
  if (!is_floating(dtype) || !is_floating(x.dtype())) return cast_kernel(x.detach(), dtype);
  return prims().cast({x}, CastAttrs{dtype});
}

}  // namespace ember

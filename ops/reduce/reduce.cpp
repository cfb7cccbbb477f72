// Reductions. The kernel views the input as (outer, reduced, inner) for one block of adjacent
// dims, so summing over leading dims (bias gradients) and trailing dims (row sums) needs no copy.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "framework/core/autograd/primitive.h"
#include "ops/elementwise/cpu/half_cast.h"
#include "ops/op_list.h"
#include "framework/core/parallel.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_ops.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {

Shape normalize_dims(const Shape& dims, int64_t ndim, const char* op) {
  Shape out;
  if (dims.empty()) {
    for (int64_t i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap_dim(d, ndim, op));
  if (ndim == 0) return {};  // a 0-d tensor's one "dimension" (0 or -1) has nothing to reduce
  std::sort(out.begin(), out.end());
  EMBER_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end(), op, ": repeated dim in ", to_string(dims));
  return out;
}

Shape reduced_shape(const Shape& in, const Shape& dims, bool keepdim) {
  Shape out;
  for (int64_t i = 0; i < int64_t(in.size()); ++i) {
    bool r = std::find(dims.begin(), dims.end(), i) != dims.end();
    if (!r) out.push_back(in[size_t(i)]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// The sum of n contiguous values in Acc. Eight independent partial sums break the chain of
// dependent adds (otherwise one add per add latency, 2-4 cycles) and keep eight adds in flight;
// the order of the additions is fixed, so results repeat exactly for a given thread count.
template <class T, class Acc>
Acc sum_contiguous(const T* p, int64_t n) {
  constexpr int kLanes = 8;
  Acc part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) part[j] += Acc(p[i + j]);
  Acc acc = 0;
  for (; i < n; ++i) acc += Acc(p[i]);
  for (int j = 0; j < kLanes; ++j) acc += part[j];
  return acc;
}

// Sums a contiguous x over dims [d0, d1) into a contiguous result with those dims set to 1.
Tensor sum_block(const Tensor& x, int64_t d0, int64_t d1) {
  const Shape& s = x.shape();
  int64_t outer = 1, r = 1, inner = 1;
  for (int64_t i = 0; i < d0; ++i) outer *= s[size_t(i)];
  for (int64_t i = d0; i < d1; ++i) r *= s[size_t(i)];
  for (int64_t i = d1; i < int64_t(s.size()); ++i) inner *= s[size_t(i)];
  Shape os = s;
  for (int64_t i = d0; i < d1; ++i) os[size_t(i)] = 1;
  if (x.device() == Device::CUDA) return cuda_kernels::sum_dim(x, outer, r, inner).reshape(os);
  Tensor out = empty(os, x.dtype());
  EMBER_DISPATCH_ALL(x.dtype(), "sum", [&] {
    const scalar_t* in = x.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    if (inner == 1) {  // row sums: accumulate each row in double-width for float inputs
      using acc_t = std::conditional_t<std::is_same_v<scalar_t, float>, double, scalar_t>;
      int nt = num_threads();
      if (outer < nt && r >= (1 << 16)) {  // a few long rows (a full sum): the threads split each row
        std::vector<acc_t> part(static_cast<size_t>(nt));
        for (int64_t i = 0; i < outer; ++i) {
          const scalar_t* row = in + i * r;
          int64_t chunk = (r + nt - 1) / nt;
          parallel_for(nt, 1, [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t) {
              int64_t lo = std::min(r, t * chunk), hi = std::min(r, lo + chunk);
              part[size_t(t)] = sum_contiguous<scalar_t, acc_t>(row + lo, hi - lo);
            }
          });
          acc_t acc = 0;
          for (acc_t p : part) acc += p;
          o[i] = scalar_t(acc);
        }
        return;
      }
      parallel_for(outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(r, 1)), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = scalar_t(sum_contiguous<scalar_t, acc_t>(in + i * r, r));
      });
    } else {  // column sums: add whole rows, which vectorises along inner
      parallel_for(outer * inner, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t oi = 0; oi < outer; ++oi) {
          int64_t lo = std::max(b, oi * inner), hi = std::min(e, (oi + 1) * inner);
          if (lo >= hi) continue;
          scalar_t* dst = o + lo;
          std::fill(dst, dst + (hi - lo), scalar_t(0));
          for (int64_t k = 0; k < r; ++k) {
            const scalar_t* src = in + (oi * r + k) * inner + (lo - oi * inner);
            for (int64_t j = 0; j < hi - lo; ++j) dst[j] += src[j];
          }
        }
      });
    }
  });
  return out;
}

Tensor sum_kernel(const Tensor& x, const Shape& dims, bool keepdim) {
  if (is_half(x.dtype()) && x.device() == Device::CPU)  // float32 sums, rounded to 16 bits once
    return cpu::cast_half(sum_kernel(cpu::cast_half(x, DType::Float32), dims, keepdim), x.dtype());
  Tensor cur = x.contiguous();
  // Reduce runs of adjacent dims one block at a time, last block first.
  size_t i = dims.size();
  while (i > 0) {
    size_t j = i - 1;
    while (j > 0 && dims[j - 1] == dims[j] - 1) --j;
    cur = sum_block(cur, dims[j], dims[i - 1] + 1);
    i = j;
  }
  return cur.reshape(reduced_shape(x.shape(), dims, keepdim));
}

struct ReduceAttrs {
  Shape dims;  // sorted, wrapped
  bool keepdim;
};

std::pair<Tensor, Tensor> max_kernel(const Tensor& x_in, int64_t d, const char* op);
Tensor max_cuda(const Tensor& x_in, int64_t d, bool want_index, const char* op);

Tensor max_values(const Tensor& x, const ReduceAttrs& a) {
  int64_t d = a.dims[0];
  Tensor v = x.device() == Device::CUDA ? max_cuda(x, d, false, "max") : max_kernel(x, d, "max").first;
  return a.keepdim ? v : v.squeeze(d);
}

// Ties share max's gradient equally; the mask is a constant.
Tensor max_share(const Tensor& x, const Tensor& ans, const ReduceAttrs& a) {
  int64_t d = a.dims[0];
  Tensor m = a.keepdim ? ans : ans.unsqueeze(d);
  Tensor mask = cast(eq(x.detach(), m.detach().expand(x.shape())), x.dtype());
  return mask / sum(mask, {d}, true);
}

using ReduceOp = Primitive<ReduceAttrs>;
using ReduceCall = OpCall<ReduceAttrs>;

// The product over a.dims, with two extras for the backward: the product of the nonzero elements
// and how many elements are zero (both of the keepdim shape). A gradient written as out / x fails
// on zeros; these say what it is there.
KernelOut prod_kernel(const Tensor& x, const ReduceAttrs& a) {
  Shape order, keep_shape = reduced_shape(x.shape(), a.dims, true);
  for (int64_t i = 0; i < x.dim(); ++i)
    if (std::find(a.dims.begin(), a.dims.end(), i) == a.dims.end()) order.push_back(i);
  int64_t r = 1;
  for (int64_t d : a.dims) {
    order.push_back(d);
    r *= x.size(d);
  }
  Tensor rows = (order.empty() ? x : x.permute(order)).contiguous();
  int64_t outer = numel(keep_shape);
  auto shaped = [&](const Tensor& t) { return a.keepdim ? t : t.reshape(reduced_shape(x.shape(), a.dims, false)); };
  if (x.device() == Device::CUDA) {
    Tensor nonzero, zeros_n;
    Tensor out = cuda_kernels::prod_rows(rows.reshape({outer, r}), &nonzero, &zeros_n);
    return KernelOut(shaped(out.reshape(keep_shape)), {nonzero.reshape(keep_shape), zeros_n.reshape(keep_shape)});
  }
  check_cpu(x, "prod");
  Tensor out = empty(keep_shape, x.dtype()), nonzero = empty(keep_shape, x.dtype()), zeros_n = empty(keep_shape, x.dtype());
  EMBER_DISPATCH_FLOAT(x.dtype(), "prod", [&] {
    const scalar_t* in = rows.data<scalar_t>();
    scalar_t *o = out.data<scalar_t>(), *nz = nonzero.data<scalar_t>(), *zc = zeros_n.data<scalar_t>();
    parallel_for(outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(r, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        scalar_t p = 1, q = 1;
        int64_t zeros_seen = 0;
        for (int64_t k = 0; k < r; ++k) {
          scalar_t v = in[i * r + k];
          p *= v;
          if (v == scalar_t(0)) ++zeros_seen;
          else q *= v;
        }
        o[i] = p;
        nz[i] = q;
        zc[i] = scalar_t(zeros_seen);
      }
    });
  });
  return KernelOut(shaped(out), {nonzero, zeros_n});
}

// d prod / d x_i, of x's shape: prod / x_i where x_i != 0 (differentiable again through both);
// where x_i is the row's only zero, the product of the others; 0 where the row has two zeros.
// (At exact zeros that last part is a constant: second derivatives there are not tracked.)
Tensor prod_partials(const Tensor& x, const Tensor& ans, const std::vector<Tensor>& extras, const ReduceAttrs& a) {
  const Shape& in = x.shape();
  Shape keep = reduced_shape(in, a.dims, true);
  Tensor out = ans.reshape(keep).expand(in);
  Tensor is_zero = eq(x.detach(), scalar_like(x, 0.0));
  Tensor only_zero = eq(extras[1], scalar_like(x, 1.0)) * extras[0];
  Tensor safe_x = where(is_zero, scalar_like(x, 1.0), x);
  return where(is_zero, only_zero.expand(in), out / safe_x);
}

struct ReducePrims {
  ReduceOp sum = ReduceOp("sum")
                     .all_devices([](const Args& x, const ReduceAttrs& a) { return sum_kernel(x[0], a.dims, a.keepdim); })
                     .dtypes({DType::Float32, DType::Float64, DType::Int64, DType::BFloat16, DType::Float16})
                     .saves({}, false)
                     .vjp([](const Tensor& g, const ReduceCall& c) {
                       const Shape& in = c.in_shape(0);
                       return Grads{expand(reshape(g, reduced_shape(in, c.attrs.dims, true)), in)};
                     })
                     .jvp([](const Args& t, const ReduceCall& c) { return ember::sum(t[0], c.attrs.dims, c.attrs.keepdim); });
  ReduceOp max = ReduceOp("max")
                     .all_devices([](const Args& x, const ReduceAttrs& a) { return max_values(x[0], a); })
                     .vjp([](const Tensor& g, const ReduceCall& c) {
                       return Grads{(c.attrs.keepdim ? g : g.unsqueeze(c.attrs.dims[0])) * max_share(c.in[0], c.out, c.attrs)};
                     })
                     .jvp([](const Args& t, const ReduceCall& c) {
                       return ember::sum(t[0] * max_share(c.in[0], c.out, c.attrs), c.attrs.dims, c.attrs.keepdim);
                     });
  ReduceOp prod = ReduceOp("prod")
                      .all_devices([](const Args& x, const ReduceAttrs& a) { return prod_kernel(x[0], a); })
                      .saves({0}, true)
                      .vjp([](const Tensor& g, const ReduceCall& c) {
                        Shape keep = reduced_shape(c.in_shape(0), c.attrs.dims, true);
                        return Grads{g.reshape(keep).expand(c.in_shape(0)) * prod_partials(c.in[0], c.out, c.extras, c.attrs)};
                      })
                      .jvp([](const Args& t, const ReduceCall& c) {
                        return ember::sum(t[0] * prod_partials(c.in[0], c.out, c.extras, c.attrs), c.attrs.dims,
                                          c.attrs.keepdim);
                      });
};

const ReducePrims& prims() {
  static const ReducePrims p;
  return p;
}

}  // namespace

void declare_reduce_ops() { prims(); }

Tensor sum(const Tensor& x, const Shape& dims_in, bool keepdim) {
  EMBER_CHECK(x.defined(), "sum: input is undefined");
  // Summing a mask counts its true elements, as in PyTorch (a Bool sum would saturate at true).
  if (x.dtype() == DType::Bool) return sum(cast(x, DType::Int64), dims_in, keepdim);
  return prims().sum({x}, ReduceAttrs{normalize_dims(dims_in, x.dim(), "sum"), keepdim});
}

Tensor mean(const Tensor& x, const Shape& dims_in, bool keepdim) {
  EMBER_CHECK(x.defined(), "mean: input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), "mean: expected a floating tensor, got ", x.dtype());
  Shape dims = normalize_dims(dims_in, x.dim(), "mean");
  int64_t count = 1;
  for (int64_t d : dims) count *= x.shape()[size_t(d)];
  EMBER_CHECK(count > 0, "mean: reducing over an empty dimension of shape ", to_string(x.shape()));
  return sum(x, dims, keepdim) / double(count);
}

Tensor prod(const Tensor& x, const Shape& dims_in, bool keepdim) {
  EMBER_CHECK(x.defined(), "prod: input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), "prod: expected a float32 or float64 tensor, got ", x.dtype(), to_string(x.shape()));
  return prims().prod({x}, ReduceAttrs{normalize_dims(dims_in, x.dim(), "prod"), keepdim});
}

Tensor var(const Tensor& x, const Shape& dims_in, double correction, bool keepdim) {
  EMBER_CHECK(x.defined(), "var: input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), "var: expected a float32 or float64 tensor, got ", x.dtype(), to_string(x.shape()));
  Shape dims = normalize_dims(dims_in, x.dim(), "var");
  int64_t count = 1;
  for (int64_t d : dims) count *= x.shape()[size_t(d)];
  EMBER_CHECK(correction >= 0 && double(count) - correction > 0, "var: ", count, " elements of shape ",
              to_string(x.shape()), " over dims ", to_string(dims_in), " leave no degrees of freedom with correction ",
              correction);
  Tensor centred = x - mean(x, dims, true);
  return sum(centred * centred, dims, keepdim) / (double(count) - correction);
}

Tensor std(const Tensor& x, const Shape& dims, double correction, bool keepdim) {
  return sqrt(var(x, dims, correction, keepdim));
}

Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  EMBER_CHECK(x.defined(), "norm: input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), "norm: expected a float32 or float64 tensor, got ", x.dtype(), to_string(x.shape()));
  EMBER_CHECK(p >= 1, "norm: p must be at least 1 (or infinity), got ", p);
  if (std::isinf(p)) {
    Shape d = normalize_dims(dims, x.dim(), "norm");
    Tensor m = abs(x);
    if (d.empty()) return keepdim ? m : m.reshape(reduced_shape(x.shape(), d, false));
    // max reduces one dim at a time; the last dims first keep the earlier indices valid.
    for (size_t i = d.size(); i-- > 0;) m = max(m, d[i], true);
    return keepdim ? m : m.reshape(reduced_shape(x.shape(), d, false));
  }
  if (p == 1) return sum(abs(x), dims, keepdim);
  Tensor s = p == 2 ? sum(x * x, dims, keepdim) : sum(pow(abs(x), p), dims, keepdim);
  // The root's slope is infinite at 0: an all-zero slice takes the zero subgradient (as PyTorch)
  // instead of inf * 0 = NaN, by keeping 0 out of the root.
  Tensor zero = eq(s.detach(), scalar_like(s, 0.0));
  Tensor safe = where(zero, scalar_like(s, 1.0), s);
  Tensor root = p == 2 ? sqrt(safe) : pow(safe, 1.0 / p);
  return where(zero, scalar_like(s, 0.0), root);
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  EMBER_CHECK(x.dim() >= int64_t(shape.size()), "sum_to: cannot sum shape ", to_string(x.shape()), " to ",
              to_string(shape));
  size_t lead = size_t(x.dim()) - shape.size();
  Shape dims;
  for (size_t i = 0; i < size_t(x.dim()); ++i) {
    if (i < lead) dims.push_back(int64_t(i));
    else if (shape[i - lead] == 1 && x.shape()[i] != 1) dims.push_back(int64_t(i));
    else EMBER_CHECK(shape[i - lead] == x.shape()[i], "sum_to: cannot sum shape ", to_string(x.shape()), " to ",
                     to_string(shape));
  }
  Tensor s = dims.empty() ? x : sum(x, dims, true);
  return s.reshape(shape);
}

namespace {
// A contiguous x viewed as (outer, r, inner) around dim d, and the keepdim shape of a reduction.
struct AlongDim {
  Tensor x;
  int64_t outer = 1, r = 1, inner = 1;
  Shape kept;
};
AlongDim along_dim(const Tensor& x_in, int64_t d, const char* op) {
  AlongDim a;
  a.x = x_in.contiguous();
  const Shape& s = a.x.shape();
  EMBER_CHECK(s[size_t(d)] > 0, op, ": cannot take the max over an empty dimension of shape ", to_string(s));
  a.r = s[size_t(d)];
  for (int64_t i = 0; i < d; ++i) a.outer *= s[size_t(i)];
  for (int64_t i = d + 1; i < int64_t(s.size()); ++i) a.inner *= s[size_t(i)];
  a.kept = s;
  a.kept[size_t(d)] = 1;
  return a;
}

// Max and argmax along one dim, as (values keepdim, indices keepdim).
std::pair<Tensor, Tensor> max_kernel(const Tensor& x_in, int64_t d, const char* op = "max") {
  const AlongDim a = along_dim(x_in, d, op);
  const Tensor& x = a.x;
  const int64_t outer = a.outer, r = a.r, inner = a.inner;
  Tensor vals = empty(a.kept, x.dtype()), idx = empty(a.kept, DType::Int64);
  EMBER_DISPATCH_ALL(x.dtype(), "max", [&] {
    const scalar_t* in = x.data<scalar_t>();
    scalar_t* v = vals.data<scalar_t>();
    int64_t* ix = idx.data<int64_t>();
    parallel_for(outer * inner, 1024, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        int64_t o = p / inner, j = p % inner;
        const scalar_t* base = in + o * r * inner + j;
        scalar_t best = base[0];
        int64_t bi = 0;
        // NaN propagates: the first NaN wins and stays (as in NumPy and PyTorch).
        for (int64_t k = 1; k < r && best == best; ++k) {
          scalar_t cand = base[k * inner];
          if (cand > best || cand != cand) {
            best = cand;
            bi = k;
          }
        }
        v[p] = best;
        ix[p] = bi;
      }
    });
  });
  return {vals, idx};
}
// Max values or argmax indices along d of a CUDA tensor, keepdim shape.
Tensor max_cuda(const Tensor& x_in, int64_t d, bool want_index, const char* op = "max") {
  const AlongDim a = along_dim(x_in, d, op);
  return cuda_kernels::max_dim(a.x, a.outer, a.r, a.inner, want_index).reshape(a.kept);
}
}  // namespace

Tensor max(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_CHECK(x.defined(), "max: input is undefined");
  int64_t d = wrap_dim(dim, x.dim(), "max");
  if (x.dim() == 0) return x;
  EMBER_CHECK(x.size(d) > 0, "max: cannot take the max over an empty dimension of shape ", to_string(x.shape()));
  return prims().max({x}, ReduceAttrs{{d}, keepdim});
}

Tensor max(const Tensor& x) {
  EMBER_CHECK(x.defined(), "max: input is undefined");
  EMBER_CHECK(x.numel() > 0, "max: cannot take the max of an empty tensor of shape ", to_string(x.shape()));
  return max(x.reshape({x.numel()}), 0, false);
}

Tensor min(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_CHECK(x.defined(), "min: input is undefined");
  int64_t d = wrap_dim(dim, x.dim(), "min");
  if (x.dim() == 0) return x;
  EMBER_CHECK(x.size(d) > 0, "min: cannot take the min over an empty dimension of shape ", to_string(x.shape()));
  return neg(max(neg(x), d, keepdim));
}

Tensor min(const Tensor& x) {
  EMBER_CHECK(x.defined(), "min: input is undefined");
  EMBER_CHECK(x.numel() > 0, "min: cannot take the min of an empty tensor of shape ", to_string(x.shape()));
  return min(x.reshape({x.numel()}), 0, false);
}

Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_CHECK(x.defined() && x.dim() > 0, "argmin: input must be defined and at least 1-d");
  int64_t d = wrap_dim(dim, x.dim(), "argmin");
  EMBER_CHECK(x.size(d) > 0, "argmin: cannot take the argmin over an empty dimension of shape ", to_string(x.shape()));
  // Negation keeps the order of ties and NaN's precedence, so argmax's rules carry over.
  return argmax(x.dtype() == DType::Int64 ? 0.0 - x.detach() : neg(x.detach()), d, keepdim);
}

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_CHECK(x.defined() && x.dim() > 0, "argmax: input must be defined and at least 1-d");
  int64_t d = wrap_dim(dim, x.dim(), "argmax");
  Tensor raw = x.detach();
  if (raw.device() == Device::CUDA) {
    Tensor i = max_cuda(raw, d, true, "argmax");
    return keepdim ? i : i.squeeze(d);
  }
  Tensor i = max_kernel(raw, d, "argmax").second;
  if (!keepdim) i = i.squeeze(d);
  return i;
}

}  // namespace ember

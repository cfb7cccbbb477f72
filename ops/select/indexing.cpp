// gather and scatter_add: one kernel each over the index's elements, with the index checked first
// (serially, so that a bad one is reported before any write). gather's VJP is scatter_add into
// zeros; scatter_add's VJP is g for x and gather(g) for src. Both are linear in their data
// inputs, so the JVPs are the ops applied to the tangents.
#include "ops/select/indexing.h"

#include "framework/core/autograd/primitive.h"
#include "framework/core/parallel.h"
#include "ops/cuda_kernels.h"
#include "ops/elementwise/cpu/half_cast.h"
#include "ops/elementwise/elementwise.h"
#include "ops/op_list.h"
#include "ops/shape/shape_ops.h"

namespace ember {
namespace {

struct DimAttrs {
  int64_t dim;
};

// Every value of index within [0, size). A CUDA index is checked by the CUDA kernel as it reads it
// (ops/select/cuda/gather_scatter.cu), with the same message, instead of a copy to the host here.
void check_index_values(const char* op, const Tensor& index, int64_t size, int64_t dim, const Shape& in_shape) {
  if (index.device() == Device::CUDA) return;
  Tensor ic = index.contiguous();
  const int64_t* p = ic.data<int64_t>();
  for (int64_t i = 0; i < ic.numel(); ++i)
    EMBER_CHECK(p[i] >= 0 && p[i] < size, op, ": index ", p[i], " is out of range for dim ", dim, " of size ", size,
                " (input shape ", to_string(in_shape), ")");
}

void check_index_shape(const char* op, const Tensor& x, int64_t dim, const Tensor& index) {
  EMBER_CHECK(index.defined() && index.dtype() == DType::Int64, op, ": index must be an int64 tensor, got ",
              index.defined() ? name(index.dtype()) : "undefined", index.defined() ? to_string(index.shape()) : "");
  EMBER_CHECK(index.dim() == x.dim(), op, ": index of shape ", to_string(index.shape()), " must have as many dims as the input ",
              to_string(x.shape()));
  for (int64_t d = 0; d < x.dim(); ++d)
    EMBER_CHECK(d == dim || index.size(d) <= x.size(d), op, ": index of shape ", to_string(index.shape()),
                " is larger than the input ", to_string(x.shape()), " in dim ", d);
  EMBER_CHECK(index.device() == x.device(), op, ": index on ", index.device(), " but input on ", x.device());
}

// The offset in a contiguous tensor of `strides` that element p of the contiguous index (of
// `shape`) addresses, with the coordinate along dim replaced by the index value.
inline int64_t target_offset(int64_t p, const Shape& shape, const Shape& strides, int64_t dim, int64_t at) {
  int64_t off = 0;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    int64_t c = p % shape[size_t(d)];
    p /= shape[size_t(d)];
    off += (d == dim ? at : c) * strides[size_t(d)];
  }
  return off;
}

Tensor gather_kernel(const Tensor& x_in, int64_t dim, const Tensor& index_in) {
  check_cpu(x_in, "gather");
  Tensor x = x_in.contiguous(), index = index_in.contiguous();
  Tensor out = empty(index.shape(), x.dtype());
  Shape xs = contiguous_strides(x.shape());
  EMBER_DISPATCH_EVERY(x.dtype(), "gather", [&] {
    const scalar_t* in = x.data<scalar_t>();
    const int64_t* ix = index.data<int64_t>();
    scalar_t* o = out.data<scalar_t>();
    parallel_for(index.numel(), 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) o[p] = in[target_offset(p, index.shape(), xs, dim, ix[p])];
    });
  });
  return out;
}

Tensor scatter_add_kernel(const Tensor& x, int64_t dim, const Tensor& index_in, const Tensor& src_in) {
  check_cpu(x, "scatter_add");
  if (is_half(x.dtype())) {  // sums run in float32, rounded to 16 bits once at the end
    Tensor sum = scatter_add_kernel(cpu::cast_half(x, DType::Float32), dim, index_in, cpu::cast_half(src_in, DType::Float32));
    return cpu::cast_half(sum, x.dtype());
  }
  Tensor out = contiguous_kernel(x), index = index_in.contiguous(), src = src_in.contiguous();
  Shape os = contiguous_strides(out.shape());
  EMBER_DISPATCH_ALL(x.dtype(), "scatter_add", [&] {
    const scalar_t* s = src.data<scalar_t>();
    const int64_t* ix = index.data<int64_t>();
    scalar_t* o = out.data<scalar_t>();
    // Serial: repeated indices would race, and the order of additions stays fixed.
    for (int64_t p = 0; p < index.numel(); ++p) o[target_offset(p, index.shape(), os, dim, ix[p])] += s[p];
  });
  return out;
}

struct IndexPrims {
  Primitive<DimAttrs> gather =
      Primitive<DimAttrs>("gather")
          .cpu([](const Args& a, const DimAttrs& at) { return gather_kernel(a[0], at.dim, a[1]); })
          .cuda([](const Args& a, const DimAttrs& at) { return cuda_kernels::gather(a[0], at.dim, a[1]); })
          .dtypes({DType::Float32, DType::Float64, DType::Int64, DType::BFloat16, DType::Float16})
          .saves({1}, false)
          .vjp([](const Tensor& g, const OpCall<DimAttrs>& c) {
            Tensor z = zeros(c.in_shape(0), g.dtype(), g.device());
            return Grads{c.needs(0) ? ember::scatter_add(z, c.attrs.dim, c.in[1], g) : Tensor(), Tensor()};
          })
          .jvp([](const Args& t, const OpCall<DimAttrs>& c) { return ember::gather(t[0], c.attrs.dim, c.in[1]); });
  Primitive<DimAttrs> scatter_add =
      Primitive<DimAttrs>("scatter_add")
          .cpu([](const Args& a, const DimAttrs& at) { return scatter_add_kernel(a[0], at.dim, a[1], a[2]); })
          .cuda([](const Args& a, const DimAttrs& at) { return cuda_kernels::scatter_add(a[0], at.dim, a[1], a[2]); })
          .dtypes({DType::Float32, DType::Float64, DType::Int64, DType::BFloat16, DType::Float16})
          .saves({1}, false)
          .vjp([](const Tensor& g, const OpCall<DimAttrs>& c) {
            return Grads{c.needs(0) ? g : Tensor(), Tensor(), c.needs(2) ? ember::gather(g, c.attrs.dim, c.in[1]) : Tensor()};
          })
          .jvp([](const Args& t, const OpCall<DimAttrs>& c) {
            Tensor base = t[0].defined() ? t[0] : zeros(c.out.shape(), c.out.dtype(), c.out.device());
            if (!t[2].defined()) return base;
            return ember::scatter_add(base, c.attrs.dim, c.in[1], t[2]);
          });
};

const IndexPrims& prims() {
  static const IndexPrims p;
  return p;
}

void check_data(const char* op, const Tensor& x) {
  EMBER_CHECK(x.defined(), op, ": input is undefined");
  EMBER_CHECK(x.dim() >= 1, op, ": expected a tensor with at least one dimension, got a 0-d tensor");
}

}  // namespace

void declare_index_ops() { prims(); }

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  check_data("gather", x);
  int64_t d = wrap_dim(dim, x.dim(), "gather");
  check_index_shape("gather", x, d, index);
  check_index_values("gather", index, x.size(d), d, x.shape());
  return prims().gather({x, index.detach()}, DimAttrs{d});
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  check_data("scatter_add", x);
  int64_t d = wrap_dim(dim, x.dim(), "scatter_add");
  check_index_shape("scatter_add", x, d, index);
  EMBER_CHECK(src.defined() && src.shape() == index.shape(), "scatter_add: src of shape ",
              src.defined() ? to_string(src.shape()) : "undefined", " must have the index's shape ", to_string(index.shape()));
  EMBER_CHECK(src.dtype() == x.dtype(), "scatter_add: src is ", src.dtype(), " but the input is ", x.dtype());
  check_index_values("scatter_add", index, x.size(d), d, x.shape());
  return prims().scatter_add({x, index.detach(), src}, DimAttrs{d});
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  check_data("index_select", x);
  int64_t d = wrap_dim(dim, x.dim(), "index_select");
  EMBER_CHECK(index.defined() && index.dtype() == DType::Int64 && index.dim() == 1,
              "index_select: index must be a 1-d int64 tensor, got ", index.defined() ? name(index.dtype()) : "undefined",
              index.defined() ? to_string(index.shape()) : "");
  check_index_values("index_select", index, x.size(d), d, x.shape());
  Shape at(size_t(x.dim()), 1), out = x.shape();
  at[size_t(d)] = index.numel();
  out[size_t(d)] = index.numel();
  return gather(x, d, index.detach().reshape(at).expand(out));
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  EMBER_CHECK(indices.defined() && indices.dtype() == DType::Int64, "one_hot: indices must be an int64 tensor, got ",
              indices.defined() ? name(indices.dtype()) : "undefined");
  if (indices.device() == Device::CUDA) {
    // Inferring the class count needs the largest index on the host: one small copy.
    if (num_classes < 0) {
      EMBER_CHECK(num_classes == -1, "one_hot: num_classes must be positive or -1, got ", num_classes);
      return one_hot(indices.to(Device::CPU), num_classes).to(Device::CUDA);
    }
    return cuda_kernels::one_hot(indices, num_classes, DType::Int64);
  }
  check_cpu(indices, "one_hot");
  Tensor ic = indices.contiguous();
  const int64_t* p = ic.data<int64_t>();
  if (num_classes < 0) {
    EMBER_CHECK(num_classes == -1, "one_hot: num_classes must be positive or -1, got ", num_classes);
    EMBER_CHECK(ic.numel() > 0, "one_hot: cannot infer num_classes from an empty tensor");
    num_classes = 0;
    for (int64_t i = 0; i < ic.numel(); ++i) num_classes = std::max(num_classes, p[i] + 1);
  }
  check_index_values("one_hot", ic, num_classes, ic.dim(), ic.shape());
  Shape shape = ic.shape();
  shape.push_back(num_classes);
  Tensor out = zeros(shape, DType::Int64);
  int64_t* o = out.data<int64_t>();
  for (int64_t i = 0; i < ic.numel(); ++i) o[i * num_classes + p[i]] = 1;
  return out;
}

Tensor nonzero(const Tensor& x) {
  EMBER_CHECK(x.defined(), "nonzero: input is undefined");
  if (x.device() == Device::CUDA) return cuda_kernels::nonzero(x);
  check_cpu(x, "nonzero");
  Tensor xc = x.contiguous();
  std::vector<int64_t> coords;
  int64_t nd = x.dim(), count = 0;
  EMBER_DISPATCH_ALL_AND_BOOL(x.dtype(), "nonzero", [&] {
    const scalar_t* p = xc.data<scalar_t>();
    for (int64_t i = 0; i < xc.numel(); ++i) {
      if (p[i] == scalar_t(0)) continue;
      ++count;
      size_t at = coords.size();
      coords.resize(at + size_t(nd));
      for (int64_t d = nd - 1, r = i; d >= 0; --d) {
        coords[at + size_t(d)] = r % x.size(d);
        r /= x.size(d);
      }
    }
  });
  if (count == 0) return empty({0, nd}, DType::Int64);
  return from_vector(coords, {count, nd});
}

}  // namespace ember

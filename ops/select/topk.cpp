// topk and sort: checks, dispatch to the row kernels, and the derivative rules of `values`.
// The chosen values are x gathered at the indices, so the VJP scatters g back to those positions
// and the JVP gathers the tangent there. Both go through embedding (a gather of rows) and
// embedding_backward (its scatter-add) on x viewed as a (rows * n, 1) table, with flat positions
// row * n + index as ids: that pair is each other's transpose, so any order of derivatives works.
#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/elementwise/elementwise.h"
#include "ops/embedding/embedding.h"
#include "ops/select/checks.h"
#include "ops/select/cpu/select_cpu.h"
#include "ops/select/select.h"
#include "ops/shape/shape_ops.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {

// The raw kernel: any strides, any leading shape; nothing recorded.
TopK topk_kernel(const Tensor& x, int64_t k, bool largest) {
  int64_t n = x.size(-1);
  Shape out_shape = x.shape();
  out_shape.back() = k;
  if (k == 0 || x.numel() == 0) return {empty(out_shape, x.dtype(), x.device()), empty(out_shape, DType::Int64, x.device())};
  Tensor rows = (x.is_contiguous() ? x : contiguous_kernel(x)).view({x.numel() / n, n});
  TopK r;
  if (x.device() == Device::CUDA) r = cuda_kernels::topk_rows(rows, k, largest);
  if (!r.values.defined()) {
    check_cpu(x, "topk");
    r = cpu::topk_rows(rows, k, largest);
  }
  return {r.values.view(out_shape), r.indices.view(out_shape)};
}

// Flat positions row * n + indices[row, j] of indices (..., k) into a (rows * n) table.
Tensor flat_positions(const Tensor& indices, int64_t n) {
  int64_t k = indices.size(-1);
  if (indices.numel() == 0) return empty({0}, DType::Int64, indices.device());
  int64_t rows = indices.numel() / k;
  Tensor starts = arange(0, rows * n, n).reshape({rows, 1}).to(indices.device());
  return add(indices.reshape({rows, k}), starts).reshape({rows * k});
}

// src (..., n) gathered at `flat` into shape `out_shape` (..., k): the JVP.
Tensor gather_at(const Tensor& src, const Tensor& flat, const Shape& out_shape) {
  return embedding(src.reshape({src.numel(), 1}), flat).reshape(out_shape);
}

// g (..., k) added into zeros of `x_shape` (..., n) at `flat`: the VJP.
Tensor scatter_to(const Tensor& g, const Tensor& flat, const Shape& x_shape) {
  return embedding_backward(g.reshape({g.numel(), 1}), flat, numel(x_shape)).reshape(x_shape);
}

struct SelectAttrs {
  int64_t k;
  bool largest;
};
using SelectCall = OpCall<SelectAttrs>;

// The node's value is the chosen values; the indices ride along as an extra.
KernelOut kernel(const Args& a, const SelectAttrs& at) {
  TopK r = topk_kernel(a[0], at.k, at.largest);
  return {r.values, {r.indices}};
}

Primitive<SelectAttrs> select_primitive(const char* name) {
  return Primitive<SelectAttrs>(name)
      .all_devices(kernel)
      .saves({}, false)
      .vjp([](const Tensor& g, const SelectCall& c) {
        const Shape& shape = c.in_shape(0);
        return Grads{scatter_to(g, flat_positions(c.extras[0], shape.back()), shape)};
      })
      .jvp([](const Args& t, const SelectCall& c) {
        return gather_at(t[0], flat_positions(c.extras[0], t[0].size(-1)), c.out.shape());
      });
}

struct SelectPrims {
  Primitive<SelectAttrs> topk = select_primitive("topk"), sort = select_primitive("sort");
};

const SelectPrims& prims() {
  static const SelectPrims p;
  return p;
}

TopK select_impl(const Primitive<SelectAttrs>& op, const Tensor& x, int64_t k, bool largest) {
  const char* name = op.info().node_name;
  select::check_input(name, x);
  int64_t n = x.size(-1);
  EMBER_CHECK(k >= 0 && k <= n, name, ": k = ", k, " is outside [0, ", n, "] for an input of shape ", to_string(x.shape()),
              " (k counts entries of the last dim)");
  KernelOut r = op.apply({x}, SelectAttrs{k, largest});
  return {r.out, r.extras[0]};
}

}  // namespace

void declare_topk_ops() { prims(); }

TopK topk(const Tensor& x, int64_t k, bool largest) { return select_impl(prims().topk, x, k, largest); }

TopK sort(const Tensor& x, bool descending) {
  select::check_input("sort", x);
  return select_impl(prims().sort, x, x.size(-1), descending);
}

}  // namespace ember

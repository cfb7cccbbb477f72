// topk and sort: checks, dispatch to the row kernels, and the derivative rules of `values`.
// The chosen values are x gathered at the indices, so the VJP scatters g back to those positions
// and the JVP gathers the tangent there. Both go through embedding (a gather of rows) and
// embedding_backward (its scatter-add) on x viewed as a (rows * n, 1) table, with flat positions
// row * n + index as ids: that pair is each other's transpose, so any order of derivatives works.
#include "framework/autograd/trace.h"
#include "ops/elementwise/elementwise.h"
#include "ops/embedding/embedding.h"
#include "ops/select/checks.h"
#include "ops/select/cpu/select_cpu.h"
#include "ops/select/select.h"
#include "ops/shape/shape_ops.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
TopK topk_rows(const Tensor& x, int64_t k, bool largest);  // ops/select/cuda/topk.cu
}
#endif

namespace {

// The raw kernel: any strides, any leading shape; nothing recorded.
TopK topk_kernel(const Tensor& x, int64_t k, bool largest) {
  int64_t n = x.size(-1);
  Shape out_shape = x.shape();
  out_shape.back() = k;
  if (k == 0 || x.numel() == 0) return {empty(out_shape, x.dtype(), x.device()), empty(out_shape, DType::Int64, x.device())};
  Tensor rows = (x.is_contiguous() ? x : contiguous_kernel(x)).view({x.numel() / n, n});
  TopK r;
#ifdef EMBER_CUDA
  if (x.device() == Device::CUDA) r = cuda::topk_rows(rows, k, largest);
#endif
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

TopK select_impl(const char* op, const Tensor& x, int64_t k, bool largest) {
  select::check_input(op, x);
  int64_t n = x.size(-1);
  EMBER_CHECK(k >= 0 && k <= n, op, ": k = ", k, " is outside [0, ", n, "] for an input of shape ", to_string(x.shape()),
              " (k counts entries of the last dim)");
  Tensor indices;
  auto r = autograd::record(
      op, {x},
      [&](const autograd::Args& a) {
        TopK inner = select_impl(op, a[0], k, largest);
        indices = inner.indices;
        return inner.values;
      },
      [&](const Tensor&, const autograd::Args& a) -> autograd::VjpFn {
        return [flat = flat_positions(indices, n), shape = a[0].shape()](const Tensor& g, int) {
          return scatter_to(g, flat, shape);
        };
      },
      [&](const autograd::Args& t, const Tensor& ans, const autograd::Args&) {
        return gather_at(t[0], flat_positions(indices, n), ans.shape());
      });
  if (r) return {*r, indices};
  return topk_kernel(x, k, largest);
}

}  // namespace

TopK topk(const Tensor& x, int64_t k, bool largest) { return select_impl("topk", x, k, largest); }

TopK sort(const Tensor& x, bool descending) {
  select::check_input("sort", x);
  return select_impl("sort", x, x.size(-1), descending);
}

}  // namespace ember

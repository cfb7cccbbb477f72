// cumsum and cumsum_reverse: checks, dispatch, and their rules. Both are linear, and each is the
// other's transpose (d/dx_j of sum_{i} g_i * sum_{j<=i} x_j = sum_{i>=j} g_i), so the VJP of one
// is the other and the JVP is the op itself applied to the tangent.
#include "framework/autograd/trace.h"
#include "ops/select/checks.h"
#include "ops/select/cpu/select_cpu.h"
#include "ops/select/select.h"
#include "ops/shape/shape_ops.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
Tensor scan_rows(const Tensor& x, bool reverse);  // ops/select/cuda/scan.cu
}
#endif

namespace {

Tensor scan_kernel(const Tensor& x, int64_t dim, bool reverse) {
  if (x.numel() == 0) return empty(x.shape(), x.dtype(), x.device());
#ifdef EMBER_CUDA
  if (x.device() == Device::CUDA) {
    // The device scan runs over contiguous rows: move dim last, scan, move it back.
    int64_t last = x.dim() - 1, n = x.size(dim);
    Tensor xt = dim == last ? x : x.transpose(dim, last);
    Tensor rows = (xt.is_contiguous() ? xt : contiguous_kernel(xt)).view({xt.numel() / n, n});
    Tensor out = cuda::scan_rows(rows, reverse).view(xt.shape());
    return dim == last ? out : contiguous_kernel(out.transpose(dim, last));
  }
#endif
  check_cpu(x, reverse ? "cumsum_reverse" : "cumsum");
  return cpu::scan(x, dim, reverse);
}

Tensor scan(const char* op, const Tensor& x, int64_t dim_in, bool reverse) {
  select::check_input(op, x);
  int64_t dim = select::normalize_dim(op, x, dim_in);
  auto r = autograd::record(
      op, {x}, [&](const autograd::Args& a) { return scan(op, a[0], dim, reverse); },
      [&](const Tensor&, const autograd::Args&) -> autograd::VjpFn {
        return [dim, reverse](const Tensor& g, int) { return reverse ? cumsum(g, dim) : cumsum_reverse(g, dim); };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args&) { return scan(op, t[0], dim, reverse); });
  return r ? *r : scan_kernel(x, dim, reverse);
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) { return scan("cumsum", x, dim, false); }
Tensor cumsum_reverse(const Tensor& x, int64_t dim) { return scan("cumsum_reverse", x, dim, true); }

}  // namespace ember

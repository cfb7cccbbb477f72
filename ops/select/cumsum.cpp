// cumsum and cumsum_reverse: checks, dispatch, and their rules. Both are linear, and each is the
// other's transpose (d/dx_j of sum_{i} g_i * sum_{j<=i} x_j = sum_{i>=j} g_i), so the VJP of one
// is the other and the JVP is the op itself applied to the tangent.
#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/select/checks.h"
#include "ops/select/cpu/select_cpu.h"
#include "ops/select/select.h"
#include "ops/shape/shape_ops.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {

Tensor scan_kernel(const Tensor& x, int64_t dim, bool reverse) {
  if (x.numel() == 0) return empty(x.shape(), x.dtype(), x.device());
  if (x.device() == Device::CUDA) {
    // The device scan runs over contiguous rows: move dim last, scan, move it back.
    int64_t last = x.dim() - 1, n = x.size(dim);
    Tensor xt = dim == last ? x : x.transpose(dim, last);
    Tensor rows = (xt.is_contiguous() ? xt : contiguous_kernel(xt)).view({xt.numel() / n, n});
    Tensor out = cuda_kernels::scan_rows(rows, reverse).view(xt.shape());
    return dim == last ? out : contiguous_kernel(out.transpose(dim, last));
  }
  check_cpu(x, reverse ? "cumsum_reverse" : "cumsum");
  return cpu::scan(x, dim, reverse);
}

struct ScanAttrs {
  int64_t dim;
};
using ScanCall = OpCall<ScanAttrs>;

Primitive<ScanAttrs> scan_primitive(const char* name, bool reverse) {
  auto k = [reverse](const Args& a, const ScanAttrs& at) { return KernelOut(scan_kernel(a[0], at.dim, reverse)); };
  return Primitive<ScanAttrs>(name)
      .all_devices(k)
      .saves({}, false)
      .vjp([reverse](const Tensor& g, const ScanCall& c) {
        return Grads{reverse ? cumsum(g, c.attrs.dim) : cumsum_reverse(g, c.attrs.dim)};
      })
      .jvp([reverse](const Args& t, const ScanCall& c) {
        return reverse ? cumsum_reverse(t[0], c.attrs.dim) : cumsum(t[0], c.attrs.dim);
      });
}

struct ScanPrims {
  Primitive<ScanAttrs> cumsum = scan_primitive("cumsum", false), cumsum_reverse = scan_primitive("cumsum_reverse", true);
};

const ScanPrims& prims() {
  static const ScanPrims p;
  return p;
}

Tensor scan(const Primitive<ScanAttrs>& op, const Tensor& x, int64_t dim_in) {
  const char* name = op.info().node_name;
  select::check_input(name, x);
  return op({x}, ScanAttrs{select::normalize_dim(name, x, dim_in)});
}

}  // namespace

void declare_scan_ops() { prims(); }

Tensor cumsum(const Tensor& x, int64_t dim) { return scan(prims().cumsum, x, dim); }
Tensor cumsum_reverse(const Tensor& x, int64_t dim) { return scan(prims().cumsum_reverse, x, dim); }

}  // namespace ember

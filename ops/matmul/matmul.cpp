// matmul: checks, NumPy promotion of 1-d operands, batch broadcasting, dispatch to a kernel
// variant, and the VJP/JVP (one formula for every device and variant).
#include "ops/matmul/matmul.h"

#include "framework/autograd/trace.h"
#include "framework/strided.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/cpu/kernels.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_ops.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
Tensor matmul(const Tensor& a, const Tensor& b, const Shape& batch, const MatmulOptions& opt);  // cuda/matmul.cu
}
#endif

namespace {
thread_local MatmulImpl t_default_impl = MatmulImpl::Auto;
}

MatmulImplGuard::MatmulImplGuard(MatmulImpl impl) : prev_(t_default_impl) { t_default_impl = impl; }
MatmulImplGuard::~MatmulImplGuard() { t_default_impl = prev_; }
MatmulImpl default_matmul_impl() { return t_default_impl; }

const char* name(MatmulImpl impl) {
  static const char* names[] = {"auto", "naive", "blocked", "packed", "blas", "tiled", "register_tiled", "cublas", "cublas_tf32"};
  return names[int(impl)];
}

MatmulImpl parse_matmul_impl(const std::string& s) {
  for (int i = 0; i <= int(MatmulImpl::CublasTF32); ++i)
    if (s == name(MatmulImpl(i))) return MatmulImpl(i);
  throw Error(str("unknown matmul impl '", s,
                  "' (expected auto, naive, blocked, packed, blas, tiled, register_tiled, cublas or cublas_tf32)"));
}

void cpu_gemm(const GemmArgs& g, const MatmulOptions& opt) {
  switch (opt.impl) {
    case MatmulImpl::Naive: return cpu::gemm_naive(g);
    case MatmulImpl::Blocked: return cpu::gemm_blocked(g, opt.block_m, opt.block_n, opt.block_k);
    case MatmulImpl::Auto:  // the fastest of Ember's own (examples/matmul/README.md)
      if (g.m == 1) return cpu::gemv(g);  // generation steps: packing B would double its traffic
      return cpu::gemm_packed(g);
    case MatmulImpl::Packed: return cpu::gemm_packed(g);
    case MatmulImpl::Blas: return cpu::gemm_blas(g);
    default: throw Error(str("matmul: impl '", name(opt.impl), "' is not available on the CPU in this build"));
  }
}

namespace {

Tensor matmul_cpu(const Tensor& a, const Tensor& b, const Shape& batch, const MatmulOptions& opt) {
  int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  Shape ashape = batch, bshape = batch, oshape = batch;
  ashape.insert(ashape.end(), {m, k});
  bshape.insert(bshape.end(), {k, n});
  oshape.insert(oshape.end(), {m, n});
  Tensor ae = a.expand(ashape), be = b.expand(bshape);  // stride-0 views, no copies
  Tensor out = empty(oshape, a.dtype());
  if (out.numel() == 0) return out;
  if (k == 0) return out.zero_();
  size_t nb = batch.size();
  Shape abst(ae.strides().begin(), ae.strides().begin() + long(nb));
  Shape bbst(be.strides().begin(), be.strides().begin() + long(nb));
  Shape obst(out.strides().begin(), out.strides().begin() + long(nb));
  size_t es = itemsize(a.dtype());
  const char* pa = static_cast<const char*>(ae.impl()->storage->data());
  const char* pb = static_cast<const char*>(be.impl()->storage->data());
  char* po = static_cast<char*>(out.raw_data());
  auto run = [&](int64_t oa, int64_t ob, int64_t oo) {
    GemmArgs g{m, n, k, pa + oa * int64_t(es), ae.strides()[nb], ae.strides()[nb + 1],
               pb + ob * int64_t(es), be.strides()[nb], be.strides()[nb + 1], po + oo * int64_t(es), n, a.dtype()};
    cpu_gemm(g, opt);
  };
  if (nb == 0) {
    run(ae.offset(), be.offset(), 0);
    return out;
  }
  Shape rows = batch;  // iterate batch indices; the "row" here is the last batch dim
  for_each_row<3>(rows, {&abst, &bbst, &obst}, {ae.offset(), be.offset(), 0},
                  [&](const std::array<int64_t, 3>& off, int64_t len) {
                    for (int64_t i = 0; i < len; ++i) run(off[0] + i * abst.back(), off[1] + i * bbst.back(), off[2] + i * obst.back());
                  });
  return out;
}

Tensor matmul_nd(const Tensor& a, const Tensor& b, const MatmulOptions& opt) {
  auto r = autograd::record(
      "matmul", {a, b}, [&](const autograd::Args& x) { return matmul_nd(x[0], x[1], opt); },
      [&](const Tensor&, const autograd::Args& x) -> autograd::VjpFn {
        return [a = x[0], b = x[1], opt](const Tensor& g, int i) {
          return i == 0 ? sum_to(matmul(g, b.transpose(-2, -1), opt), a.shape())
                        : sum_to(matmul(a.transpose(-2, -1), g, opt), b.shape());
        };
      },
      [&](const autograd::Args& t, const Tensor& ans, const autograd::Args& x) {
        Tensor out;
        if (t[0].defined()) out = matmul(t[0], x[1], opt);
        if (t[1].defined()) out = out.defined() ? out + matmul(x[0], t[1], opt) : matmul(x[0], t[1], opt);
        return out.shape() == ans.shape() ? out : out.expand(ans.shape());
      });
  if (r) return *r;
  Shape abatch(a.shape().begin(), a.shape().end() - 2), bbatch(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(abatch, bbatch, "matmul");
  MatmulOptions o = opt;
  if (o.impl == MatmulImpl::Auto) o.impl = default_matmul_impl();
#ifdef EMBER_CUDA
  if (a.device() == Device::CUDA) return cuda::matmul(a, b, batch, o);
#endif
  return matmul_cpu(a, b, batch, o);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, const MatmulOptions& opt) {
  EMBER_CHECK(a.defined() && b.defined(), "matmul: an operand is undefined");
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul: operands must be at least 1-d, got shapes ", to_string(a.shape()),
              " and ", to_string(b.shape()));
  EMBER_CHECK(a.dtype() == b.dtype(), "matmul: dtype mismatch, ", a.dtype(), " vs ", b.dtype());
  EMBER_CHECK(is_floating(a.dtype()), "matmul: expected float32 or float64 operands, got ", a.dtype());
  EMBER_CHECK(a.device() == b.device(), "matmul: device mismatch, ", a.device(), " vs ", b.device());
  if (a.dim() == 1 && b.dim() == 1) return matmul(a.unsqueeze(0), b.unsqueeze(1), opt).reshape({});
  if (a.dim() == 1) return matmul(a.unsqueeze(0), b, opt).squeeze(-2);
  if (b.dim() == 1) return matmul(a, b.unsqueeze(-1), opt).squeeze(-1);
  EMBER_CHECK(a.size(-1) == b.size(-2), "matmul: inner dimensions differ, ", to_string(a.shape()), " @ ",
              to_string(b.shape()), " (", a.size(-1), " vs ", b.size(-2), ")");
  return matmul_nd(a, b, opt);
}

}  // namespace ember

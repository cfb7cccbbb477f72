// matmul: checks, NumPy promotion of 1-d operands, batch broadcasting, dispatch to a kernel
// variant, and the VJP/JVP (one formula for every device and variant).
#include "ops/matmul/matmul.h"

#include <algorithm>

#include "framework/autograd/primitive.h"
#include "ops/op_list.h"
#include "framework/strided.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/cpu/kernels.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_ops.h"
#include "ops/cuda_kernels.h"

namespace ember {

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

namespace {
// C (m x 1) = A b as its transpose, C^T = b^T A^T: one row times a matrix, the GEMV kernel's shape.
// A's rows become B's columns, so a row-major A takes the dot-product path (each row of A read once,
// contiguously) and a transposed A the axpy path.
GemmArgs as_row_times_matrix(const GemmArgs& g) {
  return GemmArgs{1, g.m, g.k, g.b, g.b_cs, g.b_rs, g.a, g.a_cs, g.a_rs, g.c, g.m, g.dtype};
}
}  // namespace

void cpu_gemm(const GemmArgs& g, const MatmulOptions& opt) {
  switch (opt.impl) {
    case MatmulImpl::Naive: return cpu::gemm_naive(g);
    case MatmulImpl::Blocked: return cpu::gemm_blocked(g, opt.block_m, opt.block_n, opt.block_k);
    case MatmulImpl::Auto:  // the fastest of Ember's own (examples/matmul/README.md)
      if (g.m == 1) return cpu::gemv(g);  // generation steps: packing B would double its traffic
      if (g.n == 1 && g.c_rs == 1) return cpu::gemv(as_row_times_matrix(g));  // matrix times column vector
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
  // A stack of matrices times one shared column vector is one tall matrix-vector product: one pass
  // over all of A with the threads splitting every row, instead of a short GEMV per matrix.
  const bool shared_b = std::all_of(bbst.begin(), bbst.end(), [](int64_t s) { return s == 0; });
  if (n == 1 && shared_b && opt.impl == MatmulImpl::Auto && a.shape() == ashape && a.is_contiguous()) {
    GemmArgs g{out.numel(), 1, k, pa + ae.offset() * int64_t(es), k, 1, pb + be.offset() * int64_t(es),
               be.strides()[nb], be.strides()[nb + 1], po, 1, a.dtype()};
    cpu_gemm(g, opt);
    return out;
  }
  Shape rows = batch;  // iterate batch indices; the "row" here is the last batch dim
  for_each_row<3>(rows, {&abst, &bbst, &obst}, {ae.offset(), be.offset(), 0},
                  [&](const std::array<int64_t, 3>& off, int64_t len) {
                    for (int64_t i = 0; i < len; ++i) run(off[0] + i * abst.back(), off[1] + i * bbst.back(), off[2] + i * obst.back());
                  });
  return out;
}

// The kernel of one variant (opt.impl) on raw operands of at least 2 dims.
Tensor matmul_run(const Tensor& a, const Tensor& b, MatmulOptions o) {
  Shape abatch(a.shape().begin(), a.shape().end() - 2), bbatch(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(abatch, bbatch, "matmul");
  if (a.device() == Device::CUDA) return cuda_kernels::matmul(a, b, batch, o);
  return matmul_cpu(a, b, batch, o);
}

using MatmulOp = Primitive<MatmulOptions>;

// Every variant the build has, by device: a study or a test selects one by name (opt.impl, a
// MatmulImplGuard, or a ScopedVariant), and Auto picks the fastest of Ember's own.
MatmulOp matmul_primitive() {
  auto with = [](MatmulImpl impl) {
    return [impl](const Args& x, const MatmulOptions& opt) {
      MatmulOptions o = opt;
      o.impl = impl;
      return KernelOut(matmul_run(x[0], x[1], o));
    };
  };
  auto auto_kernel = [](const Args& x, const MatmulOptions& opt) {
    MatmulOptions o = opt;
    o.impl = MatmulImpl::Auto;
    return KernelOut(matmul_run(x[0], x[1], o));
  };
  MatmulOp p("matmul");
  p.cpu(auto_kernel).cuda(auto_kernel);
  for (MatmulImpl i : {MatmulImpl::Naive, MatmulImpl::Blocked, MatmulImpl::Packed}) p.variant(Device::CPU, name(i), with(i));
  p.variant(Device::CPU, name(MatmulImpl::Blas), with(MatmulImpl::Blas));
  for (MatmulImpl i : {MatmulImpl::Naive, MatmulImpl::Tiled, MatmulImpl::RegisterTiled, MatmulImpl::Cublas,
                       MatmulImpl::CublasTF32})
    p.variant(Device::CUDA, name(i), with(i));
  p.choose([](const Args&, const MatmulOptions& opt) -> const char* {
     MatmulImpl impl = opt.impl == MatmulImpl::Auto ? default_matmul_impl() : opt.impl;
     return impl == MatmulImpl::Auto ? nullptr : name(impl);
   })
      .vjp([](const Tensor& g, const OpCall<MatmulOptions>& c) {
        const Tensor &a = c.in[0], &b = c.in[1];
        Grads out(2);
        if (c.needs(0)) out[0] = sum_to(matmul(g, b.transpose(-2, -1), c.attrs), a.shape());
        if (c.needs(1)) out[1] = sum_to(matmul(a.transpose(-2, -1), g, c.attrs), b.shape());
        return out;
      })
      .jvp([](const Args& t, const OpCall<MatmulOptions>& c) {
        Tensor out;
        if (t[0].defined()) out = matmul(t[0], c.in[1], c.attrs);
        if (t[1].defined()) out = out.defined() ? out + matmul(c.in[0], t[1], c.attrs) : matmul(c.in[0], t[1], c.attrs);
        return out.shape() == c.out.shape() ? out : out.expand(c.out.shape());
      })
      .saves({0, 1}, false);
  return p;
}

const MatmulOp& matmul_op() {
  static const MatmulOp p = matmul_primitive();
  return p;
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
  return matmul_op()({a, b}, opt);
}

void declare_matmul_ops() { matmul_op(); }

}  // namespace ember

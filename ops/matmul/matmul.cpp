// matmul: checks, NumPy promotion of 1-d operands, batch broadcasting, dispatch to a kernel
// variant by name, the registry of CPU variants, and the VJP/JVP (one formula for every device
// and variant).
#include "ops/matmul/matmul.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "framework/core/strided.h"
#include "ops/elementwise/cpu/half_cast.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/cpu/kernels.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_ops.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {

bool is_default(const std::string& impl) { return is_default_variant(impl); }

// C (m x 1) = A b as its transpose, C^T = b^T A^T: one row times a matrix, the GEMV kernel's shape.
// A's rows become B's columns, so a row-major A takes the dot-product path (each row of A read once,
// contiguously) and a transposed A the axpy path.
GemmArgs as_row_times_matrix(const GemmArgs& g) {
  return GemmArgs{1, g.m, g.k, g.b, g.b_cs, g.b_rs, g.a, g.a_cs, g.a_rs, g.c, g.m, g.dtype};
}

// The library's CPU kernel: the fastest of Ember's own per shape (examples/matmul/README.md).
void gemm_best(const GemmArgs& g) {
  if (g.m == 1) return cpu::gemv(g);  // generation steps: packing B would double its traffic
  if (g.n == 1 && g.c_rs == 1) return cpu::gemv(as_row_times_matrix(g));  // matrix times column vector
  cpu::gemm_packed(g);
}

// The registered variants' 2-D kernels by name, for callers that run one directly (benchmarks, the
// CUDA backend); dispatch goes through the op table, which keeps the order. Guarded because a
// program may register while another thread asks for a kernel by name.
struct Variants {
  std::mutex mutex;
  std::map<std::string, Matmul2dKernel> kernels;     // CPU
  std::map<std::string, CudaMatmulKernels> cuda;     // CUDA, beside cuBLAS (which the backend runs)
};
Variants& cpu_variants() {
  static Variants v;
  return v;
}

}  // namespace

void cpu_gemm(const GemmArgs& g, const MatmulOptions& opt) {
  if (is_default(opt.impl)) return gemm_best(g);
  matmul_cpu_kernel(opt.impl)(g);
}

namespace {

// Whether the batch dims of x (the first nb) and its rows make one run of rows with one stride:
// each dim's stride is the next one's times its size (dims of size 1 aside).
bool folds_into_rows(const Tensor& x, size_t nb) {
  if (x.strides()[nb] == 0) return false;  // rows of a broadcast A: kernels read rows a stride apart
  int64_t want = x.strides()[nb] * x.shape()[nb];
  for (size_t d = nb; d-- > 0;) {
    if (x.shape()[d] == 1) continue;
    if (x.strides()[d] != want) return false;
    want *= x.shape()[d];
  }
  return true;
}

// The CPU products of one application with `kernel` (nullptr: the library's, which may also fold a
// batch into one tall matrix-vector product).
Tensor matmul_cpu(const Tensor& a, const Tensor& b, const Shape& batch, const Matmul2dKernel* kernel) {
  if (is_half(a.dtype())) {
    // The 16-bit operands widened to float32 scratch (vector loops) for the float32 kernels, which
    // accumulate in float32; the product is rounded to the operands' dtype once.
    Tensor c = matmul_cpu(cpu::cast_half(a, DType::Float32), cpu::cast_half(b, DType::Float32), batch, kernel);
    return cpu::cast_half(c, a.dtype());
  }
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
  auto gemm = [&](const GemmArgs& g) { kernel ? (*kernel)(g) : gemm_best(g); };
  auto run = [&](int64_t oa, int64_t ob, int64_t oo) {
    gemm(GemmArgs{m, n, k, pa + oa * int64_t(es), ae.strides()[nb], ae.strides()[nb + 1], pb + ob * int64_t(es),
                  be.strides()[nb], be.strides()[nb + 1], po + oo * int64_t(es), n, a.dtype()});
  };
  if (nb == 0) {
    run(ae.offset(), be.offset(), 0);
    return out;
  }
  // A stack of matrices times one shared matrix (x W with x of shape (B, T, C)) is one product of
  // B * T rows where A's batch and row dims make one stride: one GEMM on the general path, with
  // its threads splitting every row, instead of B short ones on the few-rows path, each with a
  // parallel region of its own. A stack times a column vector becomes one tall matrix-vector product.
  const bool shared_b = std::all_of(bbst.begin(), bbst.end(), [](int64_t s) { return s == 0; });
  if (shared_b && !kernel && folds_into_rows(ae, nb)) {
    gemm(GemmArgs{out.numel() / n, n, k, pa + ae.offset() * int64_t(es), ae.strides()[nb], ae.strides()[nb + 1],
                  pb + be.offset() * int64_t(es), be.strides()[nb], be.strides()[nb + 1], po, n, a.dtype()});
    return out;
  }
  Shape rows = batch;  // iterate batch indices; the "row" here is the last batch dim
  for_each_row<3>(rows, {&abst, &bbst, &obst}, {ae.offset(), be.offset(), 0},
                  [&](const std::array<int64_t, 3>& off, int64_t len) {
                    for (int64_t i = 0; i < len; ++i) run(off[0] + i * abst.back(), off[1] + i * bbst.back(), off[2] + i * obst.back());
                  });
  return out;
}

Shape batch_of(const Tensor& a, const Tensor& b) {
  Shape abatch(a.shape().begin(), a.shape().end() - 2), bbatch(b.shape().begin(), b.shape().end() - 2);
  return broadcast_shapes(abatch, bbatch, "matmul");
}

// On CUDA tensors the backend's dispatcher runs the variant that `impl` names ("": cuBLAS).
KernelOut matmul_cuda(const Args& x, const MatmulOptions& opt, const char* impl) {
  MatmulOptions o = opt;
  o.impl = impl;
  return cuda_kernels::matmul(x[0], x[1], batch_of(x[0], x[1]), o);
}

using MatmulOp = Primitive<MatmulOptions>;

// Called with cpu_variants().mutex held. The op table refuses a reserved or taken name first.
void add_cpu_variant(MatmulOp& p, const std::string& name, Matmul2dKernel kernel) {
  p.variant(Device::CPU, name, [k = kernel](const Args& x, const MatmulOptions&) {
    return KernelOut(matmul_cpu(x[0], x[1], batch_of(x[0], x[1]), &k));
  });
  cpu_variants().kernels.emplace(name, std::move(kernel));
}

// The library's kernel per device and its named peers; a call selects one by name (opt.impl or a
// ScopedVariant), and programs add their own (register_matmul_variant).
MatmulOp matmul_primitive() {
  MatmulOp p("matmul");
  p.cpu([](const Args& x, const MatmulOptions&) { return KernelOut(matmul_cpu(x[0], x[1], batch_of(x[0], x[1]), nullptr)); })
      .cuda([](const Args& x, const MatmulOptions& opt) { return matmul_cuda(x, opt, ""); })
      .dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16});
  {
    std::lock_guard<std::mutex> lock(cpu_variants().mutex);
    add_cpu_variant(p, "packed", [](const GemmArgs& g) { cpu::gemm_packed(g); });
    add_cpu_variant(p, "blas", cpu::gemm_blas);
  }
  // cuBLAS runs in the backend (ops/matmul/cuda); the names are known here so that a CPU-only
  // build refuses them with the same message as any unknown variant.
  for (const char* v : {"cublas", "cublas_tf32"})
    p.variant(Device::CUDA, v, [v](const Args& x, const MatmulOptions& opt) { return matmul_cuda(x, opt, v); });
  // The rules pass the options on, so a variant named there runs the backward products too.
  p.vjp([](const Tensor& g, const OpCall<MatmulOptions>& c) {
        const Tensor &a = c.in[0], &b = c.in[1];
        Grads out(2);
        if (c.needs(0)) out[0] = sum_to(matmul(g, b.transpose(-2, -1), c.attrs), a.shape());
        // A 2-D B shared by a stack of A's (x W): its gradient is one product over all the stack's rows,
        // x^T g with x as (B * T, C), instead of a stack of products and a sum over it.
        if (c.needs(1) && b.dim() == 2 && a.dim() > 2) {
          int64_t rows = 1;  // spelled out: reshape cannot infer a -1 beside a dim of size 0
          for (int64_t d = 0; d + 1 < a.dim(); ++d) rows *= a.size(d);
          out[1] = matmul(a.reshape({rows, a.size(-1)}).transpose(0, 1), g.reshape({rows, g.size(-1)}), c.attrs);
        } else if (c.needs(1)) {
          out[1] = sum_to(matmul(a.transpose(-2, -1), g, c.attrs), b.shape());
        }
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

// Not const: register_matmul_variant adds to it after its declaration.
MatmulOp& matmul_op() {
  static MatmulOp p = matmul_primitive();
  return p;
}

}  // namespace

std::vector<std::string> matmul_variants(Device d) { return matmul_op().info().variants(d); }

std::string parse_matmul_impl(const std::string& s, Device d) {
  const OpInfo& op = matmul_op().info();
  if (is_default(s) || op.has_variant(d, s)) return s;  // the message is built only for an unknown name
  return parse_variant(op, s, d,
                       str("; a study's kernels join when its program calls their registration, e.g. ",
                           d == Device::CPU ? "matmul_study::register_matmul_study_kernels() of examples/matmul"
                                            : "matmul_cuda_study::register_matmul_cuda_study_kernels() of "
                                              "examples/matmul_cuda"));
}

Matmul2dKernel matmul_cpu_kernel(const std::string& impl) {
  if (is_default(impl)) return gemm_best;
  matmul_op();  // the library's own variants are registered with the op
  {
    std::lock_guard<std::mutex> lock(cpu_variants().mutex);
    auto it = cpu_variants().kernels.find(impl);
    if (it != cpu_variants().kernels.end()) return it->second;
  }
  parse_matmul_impl(impl, Device::CPU);  // throws, naming what is registered
  throw Error(str("matmul: no CPU kernel '", impl, "'"));
}

void register_matmul_variant(const std::string& name, Matmul2dKernel kernel) {
  EMBER_CHECK(bool(kernel), "register_matmul_variant: the kernel of '", name, "' is empty");
  MatmulOp& op = matmul_op();
  std::lock_guard<std::mutex> lock(cpu_variants().mutex);
  add_cpu_variant(op, name, std::move(kernel));
}

void register_matmul_cuda_variant(const std::string& name, CudaMatmulKernels kernels) {
  EMBER_CHECK(kernels.f32 || kernels.f64, "register_matmul_cuda_variant: '", name,
              "' has neither a float32 nor a float64 kernel");
  MatmulOp& op = matmul_op();
  std::lock_guard<std::mutex> lock(cpu_variants().mutex);
  op.variant(Device::CUDA, name, [name](const Args& x, const MatmulOptions& opt) { return matmul_cuda(x, opt, name.c_str()); });
  cpu_variants().cuda.emplace(name, std::move(kernels));
}

CudaMatmulKernels matmul_cuda_kernels(const std::string& impl) {
  matmul_op();
  {
    std::lock_guard<std::mutex> lock(cpu_variants().mutex);
    auto it = cpu_variants().cuda.find(impl);
    if (it != cpu_variants().cuda.end()) return it->second;
  }
  parse_matmul_impl(impl, Device::CUDA);  // throws for a name CUDA does not have
  throw Error(str("matmul: '", impl, "' is the backend's cuBLAS, which has no registered kernels"));
}

Tensor matmul(const Tensor& a, const Tensor& b, const MatmulOptions& opt) {
  EMBER_CHECK(a.defined() && b.defined(), "matmul: an operand is undefined");
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul: operands must be at least 1-d, got shapes ", to_string(a.shape()),
              " and ", to_string(b.shape()));
  // Under autocast the engine casts both operands to one dtype (ops/autocast/autocast_policy.cpp).
  EMBER_CHECK(a.dtype() == b.dtype() || autocast::detail::active(), "matmul: dtype mismatch, ", a.dtype(), " vs ",
              b.dtype());
  EMBER_CHECK(is_floating(a.dtype()), "matmul: got ", a.dtype(), ", accepts float32, float64, bfloat16, float16");
  EMBER_CHECK(a.device() == b.device(), "matmul: device mismatch, ", a.device(), " vs ", b.device());
  if (a.dim() == 1 && b.dim() == 1) return matmul(a.unsqueeze(0), b.unsqueeze(1), opt).reshape({});
  if (a.dim() == 1) return matmul(a.unsqueeze(0), b, opt).squeeze(-2);
  if (b.dim() == 1) return matmul(a, b.unsqueeze(-1), opt).squeeze(-1);
  EMBER_CHECK(a.size(-1) == b.size(-2), "matmul: inner dimensions differ, ", to_string(a.shape()), " @ ",
              to_string(b.shape()), " (", a.size(-1), " vs ", b.size(-2), ")");
  const MatmulOp& op = matmul_op();
  if (is_default(opt.impl)) return op({a, b}, opt);
  parse_matmul_impl(opt.impl, a.device());  // an unknown name, with what there is
  ScopedVariant use(op.info(), opt.impl);
  return op({a, b}, opt);
}

void declare_matmul_ops() { matmul_op(); }

}  // namespace ember

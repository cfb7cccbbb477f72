// attention(): checks, the registry of CPU variants, the choice of kernel by name and device, and
// the VJP / JVP. The library's kernels live in cpu/ and cuda/; the composite formula in Ember ops
// in composite.cpp; the attention study's kernels in examples/attention/study/.
#include "ops/attention/attention.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/attention/attention_internal.h"
#include "ops/attention/cpu/kernels.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {

bool is_default(const std::string& impl) { return impl.empty() || impl == "auto"; }
// The library's CPU kernel, FlashAttention-2, by any of its names.
bool is_flash2(const std::string& impl) { return is_default(impl) || impl == "flash2"; }

// The registered CPU variants' kernels by name; the op's variant list keeps their order. Guarded
// because a program may register while another thread asks for a kernel by name. Entries are never
// removed, so a reference to one stays valid.
struct CpuVariants {
  std::mutex mutex;
  std::map<std::string, AttentionKernels> kernels;
};
CpuVariants& cpu_variants() {
  static CpuVariants v;
  return v;
}

}  // namespace

int64_t default_attention_block_m() {
  // Half of the L2 cache: the other half holds what streams through (V_j rows, O_i, the stack).
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 <= 0) l2 = 512 * 1024;
  return std::max<int64_t>(int64_t(l2) / 2 / int64_t(sizeof(float)), 1024);
}

AttentionBlocks attention_blocks(int64_t d, int64_t block_m) {
  EMBER_CHECK(d >= 1, "attention_blocks: head size d must be >= 1, got ", d);
  int64_t m = block_m > 0 ? block_m : default_attention_block_m();
  EMBER_CHECK(m >= 4 * d, "attention: block_m (on-chip budget M, in floats) must be at least 4 d = ", 4 * d,
              " so that a block holds one row, got ", m);
  int64_t bc = (m + 4 * d - 1) / (4 * d);
  return {m, std::min(bc, d), bc};
}

namespace attention_detail {

double effective_scale(const AttentionOptions& opt, int64_t d) {
  return opt.scale != 0 ? opt.scale : 1.0 / std::sqrt(double(d));
}

void check_qkv(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  EMBER_CHECK(q.defined() && k.defined() && v.defined(), op, ": q, k and v must be defined");
  auto shapes = [&] { return str(" (q ", to_string(q.shape()), ", k ", to_string(k.shape()), ", v ", to_string(v.shape()), ")"); };
  EMBER_CHECK(q.dim() >= 2 && q.dim() == k.dim() && q.dim() == v.dim(), op,
              ": expected q (..., Nq, d), k and v (..., Nk, d) of the same rank >= 2", shapes());
  EMBER_CHECK(k.shape() == v.shape(), op, ": k and v must have the same shape", shapes());
  for (int64_t i = 0; i + 2 < q.dim(); ++i)
    EMBER_CHECK(q.size(i) == k.size(i), op, ": leading (batch, head) dims of q and k differ", shapes());
  EMBER_CHECK(q.size(-1) == k.size(-1), op, ": head size d of q and k differ", shapes());
  EMBER_CHECK(q.size(-1) >= 1 && q.size(-2) >= 1 && k.size(-2) >= 1, op, ": empty sequence or head", shapes());
  EMBER_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), op, ": dtypes differ: q ", q.dtype(), ", k ", k.dtype(),
              ", v ", v.dtype());
  EMBER_CHECK(is_floating(q.dtype()), op, ": expected float32 or float64, got ", q.dtype());
  EMBER_CHECK(q.device() == k.device() && q.device() == v.device(), op, ": devices differ: q ", q.device(), ", k ",
              k.device(), ", v ", v.device());
  EMBER_CHECK(!opt.causal || k.size(-2) >= q.size(-2), op, ": causal attention needs Nk >= Nq (every query sees ",
              "at least one key)", shapes());
  EMBER_CHECK(std::isfinite(opt.scale), op, ": scale must be finite, got ", opt.scale);
  EMBER_CHECK(opt.block_m >= 0, op, ": block_m must be >= 0 (0 = default), got ", opt.block_m);
}

}  // namespace attention_detail

namespace {
using namespace attention_detail;

Shape lead_dims(const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); }
Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

// The problem as every CPU kernel gets it (K and V contiguous until the caller says otherwise); the
// library's own kernels take it as cpu::attn::Problem<T>::of(args).
AttentionArgs args_of(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  AttentionArgs a;
  a.dtype = q.dtype();
  a.nq = q.size(-2);
  a.nk = k.size(-2);
  a.d = q.size(-1);
  a.bh = q.numel() / (a.nq * a.d);
  a.scale = effective_scale(opt, a.d);
  a.causal = opt.causal;
  a.block_m = opt.block_m;
  a.kv_bh_stride = a.nk * a.d;
  a.q = q.raw_data();
  a.k = k.raw_data();
  a.v = v.raw_data();
  return a;
}

cuda_kernels::AttentionDims cuda_dims(const Tensor& q, const Tensor& k, const AttentionOptions& opt) {
  cuda_kernels::AttentionDims dm;
  dm.nq = q.size(-2);
  dm.nk = k.size(-2);
  dm.d = q.size(-1);
  dm.bh = q.numel() / (dm.nq * dm.d);
  dm.scale = effective_scale(opt, dm.d);
  dm.causal = opt.causal;
  return dm;
}

// On CUDA, "standard" is cuBLAS with P materialised; every other name is the flash kernel.
bool cuda_standard(const AttentionOptions& opt) { return opt.impl == "standard"; }

// The kernels of a registered CPU variant; an unknown name raises parse_attention_impl's error.
const AttentionKernels& cpu_kernels(const std::string& impl) {
  {
    std::lock_guard<std::mutex> lock(cpu_variants().mutex);
    auto it = cpu_variants().kernels.find(impl);
    if (it != cpu_variants().kernels.end()) return it->second;
  }
  parse_attention_impl(impl, Device::CPU);  // throws, naming what is registered
  throw Error(str("attention: no CPU kernel '", impl, "'"));
}

// When t's rows of d elements are contiguous, d apart within each batch*head slice, and the slices
// a uniform distance apart (at least a slice long), that distance; 0 otherwise. A KV cache's
// views over its filled positions have this shape, so the CPU forward reads them in place instead
// of copying the whole cache every generation step.
int64_t uniform_slice_stride(const Tensor& t) {
  const int64_t n = t.size(-2), d = t.size(-1);
  if (t.strides().back() != 1 || (n > 1 && t.strides()[size_t(t.dim() - 2)] != d)) return 0;
  int64_t step = 0, span = 0;
  for (int64_t i = t.dim() - 3; i >= 0; --i) {
    const int64_t size = t.size(i), stride = t.strides()[size_t(i)];
    if (size == 1) continue;
    if (step == 0) {
      if (stride < n * d) return 0;  // slices would overlap (e.g. a broadcast)
      step = stride;
    } else if (stride != span) {
      return 0;
    }
    span = stride * size;
  }
  return step == 0 ? n * d : step;
}

// The kernels on raw (untraced) tensors.
AttentionForward forward_raw(const Tensor& q0, const Tensor& k0, const Tensor& v0, const AttentionOptions& opt) {
  const int64_t kv_stride = q0.device() == Device::CPU ? uniform_slice_stride(k0) : 0;
  const bool kv_in_place = kv_stride != 0 && uniform_slice_stride(v0) == kv_stride;
  Tensor q = q0.contiguous(), k = kv_in_place ? k0 : k0.contiguous(), v = kv_in_place ? v0 : v0.contiguous();
  Shape lead = lead_dims(q);
  const int64_t nq = q.size(-2), nk = k.size(-2);
  AttentionForward r;
  r.out = empty(q.shape(), q.dtype(), q.device());
  r.lse = empty(with(lead, {nq}), q.dtype(), q.device());
  if (q.device() == Device::CUDA) {
    if (cuda_standard(opt)) r.saved = empty({q.numel() / (nq * q.size(-1)), nq, nk}, q.dtype(), q.device());
    cuda_kernels::attention_forward(cuda_dims(q, k, opt), !cuda_standard(opt), q, k, v, r.saved, r.out, r.lse);
    return r;
  }
  check_cpu(q, "attention");
  AttentionArgs a = args_of(q, k, v, opt);
  if (kv_in_place) a.kv_bh_stride = kv_stride;
  if (is_flash2(opt.impl)) {
    EMBER_DISPATCH_FLOAT(q.dtype(), "attention", [&] {
      cpu::attn::flash2_forward(cpu::attn::Problem<scalar_t>::of(a), q.data<scalar_t>(), k.data<scalar_t>(),
                                v.data<scalar_t>(), r.out.data<scalar_t>(), r.lse.data<scalar_t>());
    });
    return r;
  }
  r.saved = cpu_kernels(opt.impl).forward(a, r.out.raw_data(), r.lse.raw_data());
  return r;
}

void check_like(const char* op, const char* what, const Tensor& t, const Shape& shape, const Tensor& q) {
  EMBER_CHECK(t.defined(), op, ": ", what, " is undefined");
  EMBER_CHECK(t.shape() == shape, op, ": ", what, " has shape ", to_string(t.shape()), ", expected ", to_string(shape));
  EMBER_CHECK(t.dtype() == q.dtype(), op, ": ", what, " is ", t.dtype(), ", expected ", q.dtype());
  EMBER_CHECK(t.device() == q.device(), op, ": ", what, " is on ", t.device(), ", expected ", q.device());
}

Tensor contiguous_or_none(const Tensor& t) { return t.defined() ? t.contiguous() : t; }

AttentionGrads backward_raw(const Tensor& q0, const Tensor& k0, const Tensor& v0, const Tensor& out0,
                            const Tensor& lse0, const Tensor& saved0, const Tensor& dout0, const AttentionOptions& opt) {
  Tensor q = q0.contiguous(), k = k0.contiguous(), v = v0.contiguous(), out = out0.contiguous(),
         lse = contiguous_or_none(lse0), saved = contiguous_or_none(saved0), dout = dout0.contiguous();
  AttentionGrads g{empty(q.shape(), q.dtype(), q.device()), empty(k.shape(), k.dtype(), k.device()),
                   empty(v.shape(), v.dtype(), v.device())};
  const bool needs_lse = q.device() == Device::CUDA ? !cuda_standard(opt) : is_flash2(opt.impl);
  EMBER_CHECK(!needs_lse || lse.defined(), "attention backward (", is_default(opt.impl) ? "auto" : opt.impl,
              "): lse (the forward's row log-sum-exp) is undefined");
  if (q.device() == Device::CUDA) {
    Tensor p, ds;
    if (cuda_standard(opt)) {
      p = saved.defined() ? saved : forward_raw(q, k, v, opt).saved;  // P recomputed when the caller kept none
      ds = empty(p.shape(), q.dtype(), q.device());
    }
    cuda_kernels::attention_backward(cuda_dims(q, k, opt), !cuda_standard(opt), q, k, v, out, p.defined() ? p : lse,
                                     dout, ds, g.dq, g.dk, g.dv);
    return g;
  }
  check_cpu(q, "attention backward");
  if (is_flash2(opt.impl)) {
    EMBER_DISPATCH_FLOAT(q.dtype(), "attention backward", [&] {
      auto pr = cpu::attn::Problem<scalar_t>::of(args_of(q, k, v, opt));
      cpu::attn::flash2_backward(pr, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), out.data<scalar_t>(),
                                 lse.data<scalar_t>(), dout.data<scalar_t>(), g.dq.data<scalar_t>(),
                                 g.dk.data<scalar_t>(), g.dv.data<scalar_t>());
    });
    return g;
  }
  AttentionGradArgs ga;
  ga.out = out.raw_data();
  ga.lse = lse.defined() ? lse.raw_data() : nullptr;
  ga.saved = saved;
  ga.dout = dout.raw_data();
  ga.dq = g.dq.raw_data();
  ga.dk = g.dk.raw_data();
  ga.dv = g.dv.raw_data();
  cpu_kernels(opt.impl).backward(args_of(q, k, v, opt), ga);
  return g;
}

using AttentionOp = Primitive<AttentionOptions>;
using AttentionCall = OpCall<AttentionOptions>;

// The kernels save what their backward needs as extras: the row log-sum-exp, and the variant's own
// saved tensor (P for the standard algorithms).
KernelOut forward_kernel(const Args& a, const AttentionOptions& opt) {
  AttentionForward r = forward_raw(a[0], a[1], a[2], opt);
  return {r.out, {r.lse, r.saved}};
}

// Variant `name`'s kernel: the call's options with impl set to it (a ScopedVariant picks it
// whatever the options say).
AttentionOp::Kernel variant_kernel(const std::string& name) {
  return [name](const Args& a, const AttentionOptions& opt) {
    if (opt.impl == name) return forward_kernel(a, opt);
    AttentionOptions o = opt;
    o.impl = name;
    return forward_kernel(a, o);
  };
}

Grads as_grads(const AttentionGrads& g) { return {g.dq, g.dk, g.dv}; }

// The library's kernel per device and its names; a call selects one by name (opt.impl or a
// ScopedVariant), and programs add their own CPU variants (register_attention_variant).
AttentionOp attention_primitive() {
  // The backward kernel of the variant that ran the forward (attention() writes a ScopedVariant's
  // choice into the options, so c.attrs names it), from the forward's saved statistics.
  auto fused = [](const Tensor& g, const AttentionCall& c) {
    return as_grads(backward_raw(c.in[0], c.in[1], c.in[2], c.out, c.extras[0], c.extras[1], g, c.attrs));
  };
  AttentionOp op("attention");
  op.cpu(forward_kernel).cuda(forward_kernel);
  op.variant(Device::CPU, "flash2", variant_kernel("flash2"));
  // The CUDA kernels live in the backend (ops/attention/cuda); the names are known here so that a
  // CPU-only build refuses them with the same message as any unknown variant.
  for (const char* v : {"standard", "flash", "flash2"}) op.variant(Device::CUDA, v, variant_kernel(v));
  op.choose([](const Args&, const AttentionOptions& opt) -> const char* {
      return is_default(opt.impl) ? nullptr : opt.impl.c_str();
    })
      .vjp([](const Tensor& g, const AttentionCall& c) {
        return as_grads(backward_composite(c.in[0], c.in[1], c.in[2], c.out, g, c.attrs));
      })
      .fused_vjp(Device::CPU, fused)
      .fused_vjp(Device::CUDA, fused)
      .jvp([](const Args& t, const AttentionCall& c) {
        return jvp_composite(c.in[0], c.in[1], c.in[2], t[0], t[1], t[2], c.attrs);
      });
  return op;
}

// Not const: register_attention_variant adds to it after its declaration.
AttentionOp& attention_op() {
  static AttentionOp p = attention_primitive();
  return p;
}

// opt.impl must name a variant of device d (cheap when it does: no lock, no allocation).
void check_impl(const AttentionOptions& opt, Device d) {
  if (is_default(opt.impl) || attention_op().info().has_variant(d, opt.impl)) return;
  parse_attention_impl(opt.impl, d);  // throws, naming what is registered
}

}  // namespace

std::vector<std::string> attention_variants(Device d) {
  AttentionOp& op = attention_op();
  std::lock_guard<std::mutex> lock(cpu_variants().mutex);
  std::vector<std::string> names;
  for (const auto& [dev, v] : op.info().variants)
    if (dev == d) names.push_back(v);
  return names;
}

std::string parse_attention_impl(const std::string& s, Device d) {
  if (is_default(s)) return s;
  std::vector<std::string> names = attention_variants(d);
  if (std::find(names.begin(), names.end(), s) != names.end()) return s;
  std::string known = "auto";
  for (const std::string& n : names) known += ", " + n;
  throw Error(str("attention: variant '", s, "' is not available on ", d, " (registered: ", known, ")",
                  d == Device::CPU ? "; a study's kernels join when its program calls their registration, e.g. "
                                     "attention_study::register_attention_study_kernels() of examples/attention "
                                     "(ember.register_study_kernels() in Python)"
                                   : ""));
}

void register_attention_variant(const std::string& name, AttentionKernels kernels) {
  EMBER_CHECK(bool(kernels.forward), "register_attention_variant: the forward kernel of '", name, "' is empty");
  EMBER_CHECK(bool(kernels.backward), "register_attention_variant: the backward kernel of '", name, "' is empty");
  EMBER_CHECK(!is_default(name), "register_attention_variant: '", name,
              "' is reserved for the library's own kernel; give the variant a name of its own");
  AttentionOp& op = attention_op();
  std::lock_guard<std::mutex> lock(cpu_variants().mutex);
  EMBER_CHECK(!op.info().has_variant(Device::CPU, name),
              "register_attention_variant: attention already has a CPU variant '", name, "'");
  cpu_variants().kernels.emplace(name, std::move(kernels));
  op.variant(Device::CPU, name, variant_kernel(name));
}

AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  check_qkv("attention_forward", q, k, v, opt);
  check_impl(opt, q.device());
  return forward_raw(autograd::unbox_all(q), autograd::unbox_all(k), autograd::unbox_all(v), opt);
}

AttentionGrads attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                  const Tensor& lse, const Tensor& saved, const Tensor& dout,
                                  const AttentionOptions& opt) {
  const char* op = "attention_backward";
  check_qkv(op, q, k, v, opt);
  check_like(op, "out", out, q.shape(), q);
  check_like(op, "dout", dout, q.shape(), q);
  if (lse.defined()) check_like(op, "lse", lse, with(lead_dims(q), {q.size(-2)}), q);
  if (saved.defined()) {
    EMBER_CHECK(saved.dtype() == q.dtype(), op, ": saved is ", saved.dtype(), ", expected ", q.dtype());
    EMBER_CHECK(saved.device() == q.device(), op, ": saved is on ", saved.device(), ", expected ", q.device());
  }
  check_impl(opt, q.device());
  if (autograd::any_traced({&q, &k, &v, &out, &lse, &saved, &dout})) return backward_composite(q, k, v, out, dout, opt);
  auto raw = [](const Tensor& t) { return t.defined() ? autograd::unbox_all(t) : t; };
  return backward_raw(raw(q), raw(k), raw(v), raw(out), raw(lse), raw(saved), raw(dout), opt);
}

void declare_attention_ops() { attention_op(); }

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  check_qkv("attention", q, k, v, opt);
  AttentionOp& op = attention_op();
  // A ScopedVariant's choice goes into the options, which the recorded node keeps, so that the
  // backward runs the same variant's kernel even outside the guard's scope.
  const std::string* chosen = primitive_detail::variant_override(&op.info());
  if (chosen && *chosen != opt.impl && op.info().has_variant(q.device(), *chosen)) {
    AttentionOptions o = opt;
    o.impl = *chosen;
    return op({q, k, v}, o);
  }
  check_impl(opt, q.device());
  return op({q, k, v}, opt);
}

}  // namespace ember

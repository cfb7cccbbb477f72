// attention's checks and the argument building every kernel call shares: the block sizes, the
// scale, the shape checks, and the problem as the CPU and CUDA kernels take it.
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "ops/attention/attention.h"
#include "ops/attention/attention_internal.h"
#include "ops/cuda_kernels.h"

namespace ember {

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

void check_qkv(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt,
               bool mixed_dtypes_ok) {
  EMBER_CHECK(q.defined() && k.defined() && v.defined(), op, ": q, k and v must be defined");
  auto shapes = [&] { return str(" (q ", to_string(q.shape()), ", k ", to_string(k.shape()), ", v ", to_string(v.shape()), ")"); };
  EMBER_CHECK(q.dim() >= 2 && q.dim() == k.dim() && q.dim() == v.dim(), op,
              ": expected q (..., Nq, d), k and v (..., Nk, d) of the same rank >= 2", shapes());
  EMBER_CHECK(k.shape() == v.shape(), op, ": k and v must have the same shape", shapes());
  for (int64_t i = 0; i + 2 < q.dim(); ++i)
    EMBER_CHECK(q.size(i) == k.size(i), op, ": leading (batch, head) dims of q and k differ", shapes());
  EMBER_CHECK(q.size(-1) == k.size(-1), op, ": head size d of q and k differ", shapes());
  EMBER_CHECK(q.size(-1) >= 1 && q.size(-2) >= 1 && k.size(-2) >= 1, op, ": empty sequence or head", shapes());
  EMBER_CHECK((q.dtype() == k.dtype() && q.dtype() == v.dtype()) || mixed_dtypes_ok, op, ": dtypes differ: q ", q.dtype(), ", k ", k.dtype(),
              ", v ", v.dtype());
  EMBER_CHECK(is_floating(q.dtype()), op, ": expected float32 or float64, got ", q.dtype());
  EMBER_CHECK(q.device() == k.device() && q.device() == v.device(), op, ": devices differ: q ", q.device(), ", k ",
              k.device(), ", v ", v.device());
  EMBER_CHECK(!opt.causal || k.size(-2) >= q.size(-2), op, ": causal attention needs Nk >= Nq (every query sees ",
              "at least one key)", shapes());
  EMBER_CHECK(std::isfinite(opt.scale), op, ": scale must be finite, got ", opt.scale);
  EMBER_CHECK(opt.block_m >= 0, op, ": block_m must be >= 0 (0 = default), got ", opt.block_m);
}

void check_like(const char* op, const char* what, const Tensor& t, const Shape& shape, const Tensor& q) {
  EMBER_CHECK(t.defined(), op, ": ", what, " is undefined");
  EMBER_CHECK(t.shape() == shape, op, ": ", what, " has shape ", to_string(t.shape()), ", expected ", to_string(shape));
  EMBER_CHECK(t.dtype() == q.dtype(), op, ": ", what, " is ", t.dtype(), ", expected ", q.dtype());
  EMBER_CHECK(t.device() == q.device(), op, ": ", what, " is on ", t.device(), ", expected ", q.device());
}

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

}  // namespace attention_detail
}  // namespace ember

// What the CUDA backend provides to the ops: every CUDA kernel an op calls, as a hook that
// libember_cuda.so fills when it is loaded (framework/backend_hook.h). This list is the whole
// contract between the ops and a CUDA backend; each hook is filled beside its kernel, at the end
// of the .cu (or dispatch .cpp) file that defines it.
//
// Callers reach a hook only with a CUDA tensor in hand, and a CUDA tensor exists only once the
// backend is loaded, so an unfilled hook means a broken install, and says so.
#pragma once
#include <cstdint>

#include "framework/backend_hook.h"
#include "framework/tensor.h"
#include "ops/elementwise/binary_kinds.h"
#include "ops/elementwise/unary_kinds.h"
#include "ops/matmul/matmul.h"
#include "ops/select/select.h"

namespace ember::cuda_kernels {

// One attention problem: (bh, nq, d) queries against (bh, nk, d) keys and values.
struct AttentionDims {
  int64_t bh = 1, nq = 0, nk = 0, d = 0;
  double scale = 1;
  bool causal = false;
};

// ops/shape/cuda/copy.cu (its fill serves the core: framework/cuda/runtime_hooks.h)
extern BackendHook<void(const Tensor& dst, const Tensor& src)> copy_strided;
// ops/elementwise/cuda/elementwise.cu
extern BackendHook<Tensor(UnaryOp op, const Tensor& x)> unary;
extern BackendHook<Tensor(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& shape)> binary;
extern BackendHook<Tensor(const Tensor& cond, const Tensor& a, const Tensor& b, const Shape& shape)> where;
extern BackendHook<Tensor(const Tensor& x, DType dtype)> cast;
// ops/reduce/cuda/reduce.cu: x viewed as (outer, r, inner), reduced over r
extern BackendHook<Tensor(const Tensor& x, int64_t outer, int64_t r, int64_t inner)> sum_dim;
extern BackendHook<Tensor(const Tensor& x, int64_t outer, int64_t r, int64_t inner, bool want_index)> max_dim;
// ops/softmax/cuda/softmax.cu: dim wrapped, result contiguous; logsumexp keeps dim with size 1
extern BackendHook<Tensor(const Tensor& x, int64_t dim)> softmax;
extern BackendHook<Tensor(const Tensor& x, int64_t dim)> log_softmax;
extern BackendHook<Tensor(const Tensor& x, int64_t dim)> logsumexp;
// ops/norm/cuda/layer_norm.cu: same contract as cpu::layer_norm (mean / rstd may be null)
extern BackendHook<Tensor(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean, Tensor* rstd)>
    layer_norm;
// ops/loss/cuda/cross_entropy.cu: targets on the logits' device, checked to lie in [0, C)
extern BackendHook<Tensor(const Tensor& logits, const Tensor& targets)> cross_entropy;
// ops/embedding/cuda/embedding.cu
extern BackendHook<Tensor(const Tensor& weight, const Tensor& ids)> embedding;
extern BackendHook<Tensor(const Tensor& g, const Tensor& ids, int64_t num_embeddings)> embedding_backward;
// ops/dropout/cuda/dropout.cu: the same mask as the CPU for the same seed (dropout_keep)
extern BackendHook<Tensor(const Tensor& x, double p, uint64_t seed, Tensor* mask)> dropout;
// ops/select/cuda/scan.cu and topk.cu: over contiguous rows
extern BackendHook<Tensor(const Tensor& rows, bool reverse)> scan_rows;
extern BackendHook<TopK(const Tensor& rows, int64_t k, bool largest)> topk_rows;
// ops/matmul/cuda/dispatch.cpp: a, b of at least 2 dims, broadcast over `batch`
extern BackendHook<Tensor(const Tensor& a, const Tensor& b, const Shape& batch, const MatmulOptions& opt)> matmul;
// ops/attention/cuda/dispatch.cpp: contiguous q, k, v, out, lse (and p / ds for Standard)
extern BackendHook<void(const AttentionDims& dm, bool flash, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& p, const Tensor& out, const Tensor& lse)>
    attention_forward;
extern BackendHook<void(const AttentionDims& dm, bool flash, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& out, const Tensor& aux, const Tensor& dout, const Tensor& ds, const Tensor& dq,
                        const Tensor& dk, const Tensor& dv)>
    attention_backward;

}  // namespace ember::cuda_kernels

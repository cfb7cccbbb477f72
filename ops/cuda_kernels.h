// What the CUDA backend provides to the ops: every CUDA kernel an op calls, as a hook that
// libember_cuda.so fills when it is loaded (framework/core/backend_hook.h). This list is the whole
// contract between the ops and a CUDA backend; each hook is filled beside its kernel, at the end
// of the .cu (or dispatch .cpp) file that defines it.
//
// Callers reach a hook only with a CUDA tensor in hand, and a CUDA tensor exists only once the
// backend is loaded, so an unfilled hook means a broken install, and says so.
#pragma once
#include <cstdint>

#include "framework/core/backend_hook.h"
#include "framework/core/tensor.h"
#include "ops/elementwise/binary_kinds.h"
#include "ops/elementwise/unary_kinds.h"
#include "ops/conv/conv_geometry.h"
#include "ops/matmul/matmul.h"
#include "ops/pool/pool_geometry.h"
#include "ops/select/select.h"

namespace ember::cuda_kernels {

// One attention problem: (bh, nq, d) queries against (bh, nk, d) keys and values.
struct AttentionDims {
  int64_t bh = 1, nq = 0, nk = 0, d = 0;
  double scale = 1;
  bool causal = false;
};

// ops/shape/cuda/copy.cu (its fill serves the core: framework/core/cuda_hooks.h)
extern BackendHook<void(const Tensor& dst, const Tensor& src)> copy_strided;
// ops/elementwise/cuda/elementwise.cu
extern BackendHook<Tensor(UnaryOp op, const Tensor& x)> unary;
extern BackendHook<Tensor(UnaryParamOp op, const Tensor& x, double a, double b)> unary_param;
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
// ops/norm/cuda/batch_norm.cu: same contract as cpu::batch_norm_train (w, b may be undefined)
extern BackendHook<Tensor(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean, Tensor* rstd,
                          Tensor* var)>
    batch_norm_train;
// ops/pool/cuda/max_pool.cu: same contract as cpu::max_pool2d (indices into x.flatten())
extern BackendHook<Tensor(const PoolGeometry& g, const Tensor& x, Tensor* indices)> max_pool2d;
// ops/conv/cuda/conv.cu: same contracts as cpu::conv2d_forward, conv2d_input_grad, conv2d_weight_grad
extern BackendHook<Tensor(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b)> conv2d_forward;
extern BackendHook<Tensor(const ConvGeometry& g, const Tensor& dy, const Tensor& w)> conv2d_input_grad;
extern BackendHook<Tensor(const ConvGeometry& g, const Tensor& x, const Tensor& dy)> conv2d_weight_grad;
// ops/select/cuda/gather_scatter.cu: index of x's rank, every value checked to lie in [0, x.size(dim))
extern BackendHook<Tensor(const Tensor& x, int64_t dim, const Tensor& index)> gather;
extern BackendHook<Tensor(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src)> scatter_add;
// ops/select/cuda/gather_scatter.cu: int64 (..., classes), each index checked to lie in [0, classes)
extern BackendHook<Tensor(const Tensor& indices, int64_t classes, DType dtype)> one_hot;
// ops/select/cuda/nonzero.cu: int64 (count, x.dim()) of x's nonzero positions, row-major
extern BackendHook<Tensor(const Tensor& x)> nonzero;
// ops/reduce/cuda/prod.cu: rows contiguous (outer, r); the products, the products of the nonzero
// elements and the zero counts, each (outer)
extern BackendHook<Tensor(const Tensor& rows, Tensor* nonzero, Tensor* zeros)> prod_rows;
// ops/loss/cuda/cross_entropy.cu: targets on the logits' device, checked to lie in [0, C)
extern BackendHook<Tensor(const Tensor& logits, const Tensor& targets)> cross_entropy;
// (softmax(logits) - one_hot(targets)) * g * inv_n, of the logits' shape (contiguous); g one element
extern BackendHook<Tensor(const Tensor& logits, const Tensor& targets, const Tensor& g, double inv_n)>
    cross_entropy_backward;
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

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

// Each hook's signature is written once, here: ops/cuda_kernels.cpp defines EMBER_CUDA_KERNELS_DEFINE
// and includes this header, which turns every declaration into the hook's definition.
#ifdef EMBER_CUDA_KERNELS_DEFINE
#define EMBER_CUDA_KERNEL(name, ...) BackendHook<__VA_ARGS__> name("cuda " #name);
#else
#define EMBER_CUDA_KERNEL(name, ...) extern BackendHook<__VA_ARGS__> name;
#endif

namespace ember::cuda_kernels {

// One attention problem: (bh, nq, d) queries against (bh, nk, d) keys and values.
struct AttentionDims {
  int64_t bh = 1, nq = 0, nk = 0, d = 0;
  double scale = 1;
  bool causal = false;
};

// ops/shape/cuda/copy.cu (its fill serves the core: framework/core/cuda_hooks.h)
EMBER_CUDA_KERNEL(copy_strided, void(const Tensor& dst, const Tensor& src))
// ops/elementwise/cuda/elementwise.cu
EMBER_CUDA_KERNEL(unary, Tensor(UnaryOp op, const Tensor& x))
EMBER_CUDA_KERNEL(unary_param, Tensor(UnaryParamOp op, const Tensor& x, double a, double b))
EMBER_CUDA_KERNEL(binary, Tensor(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& shape))
EMBER_CUDA_KERNEL(where, Tensor(const Tensor& cond, const Tensor& a, const Tensor& b, const Shape& shape))
EMBER_CUDA_KERNEL(cast, Tensor(const Tensor& x, DType dtype))
// ops/reduce/cuda/reduce.cu: x viewed as (outer, r, inner), reduced over r
EMBER_CUDA_KERNEL(sum_dim, Tensor(const Tensor& x, int64_t outer, int64_t r, int64_t inner))
EMBER_CUDA_KERNEL(max_dim, Tensor(const Tensor& x, int64_t outer, int64_t r, int64_t inner, bool want_index))
// ops/softmax/cuda/softmax.cu: dim wrapped, result contiguous; logsumexp keeps dim with size 1
EMBER_CUDA_KERNEL(softmax, Tensor(const Tensor& x, int64_t dim))
EMBER_CUDA_KERNEL(log_softmax, Tensor(const Tensor& x, int64_t dim))
EMBER_CUDA_KERNEL(logsumexp, Tensor(const Tensor& x, int64_t dim))
// ops/norm/cuda/layer_norm.cu: same contract as cpu::layer_norm (mean / rstd may be null)
EMBER_CUDA_KERNEL(layer_norm, Tensor(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean,
                  Tensor* rstd))
// ops/norm/cuda/batch_norm.cu: same contract as cpu::batch_norm_train (w, b may be undefined)
EMBER_CUDA_KERNEL(batch_norm_train, Tensor(const Tensor& x, const Tensor& w, const Tensor& b, double eps,
                  Tensor* mean, Tensor* rstd, Tensor* var))
// ops/pool/cuda/max_pool.cu: same contract as cpu::max_pool2d (indices into x.flatten())
EMBER_CUDA_KERNEL(max_pool2d, Tensor(const PoolGeometry& g, const Tensor& x, Tensor* indices))
// ops/conv/cuda/conv.cu: same contracts as cpu::conv2d_forward, conv2d_input_grad, conv2d_weight_grad
EMBER_CUDA_KERNEL(conv2d_forward, Tensor(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b))
EMBER_CUDA_KERNEL(conv2d_input_grad, Tensor(const ConvGeometry& g, const Tensor& dy, const Tensor& w))
EMBER_CUDA_KERNEL(conv2d_weight_grad, Tensor(const ConvGeometry& g, const Tensor& x, const Tensor& dy))
// ops/select/cuda/gather_scatter.cu: index of x's rank, every value checked to lie in [0, x.size(dim))
EMBER_CUDA_KERNEL(gather, Tensor(const Tensor& x, int64_t dim, const Tensor& index))
EMBER_CUDA_KERNEL(scatter_add, Tensor(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src))
// ops/select/cuda/gather_scatter.cu: int64 (..., classes), each index checked to lie in [0, classes)
EMBER_CUDA_KERNEL(one_hot, Tensor(const Tensor& indices, int64_t classes, DType dtype))
// ops/select/cuda/nonzero.cu: int64 (count, x.dim()) of x's nonzero positions, row-major
EMBER_CUDA_KERNEL(nonzero, Tensor(const Tensor& x))
// ops/reduce/cuda/prod.cu: rows contiguous (outer, r); the products, the products of the nonzero
// elements and the zero counts, each (outer)
EMBER_CUDA_KERNEL(prod_rows, Tensor(const Tensor& rows, Tensor* nonzero, Tensor* zeros))
// ops/loss/cuda/cross_entropy.cu: targets on the logits' device, checked to lie in [0, C)
EMBER_CUDA_KERNEL(cross_entropy, Tensor(const Tensor& logits, const Tensor& targets))
// (softmax(logits) - one_hot(targets)) * g * inv_n, of the logits' shape (contiguous); g one element
EMBER_CUDA_KERNEL(cross_entropy_backward, Tensor(const Tensor& logits, const Tensor& targets, const Tensor& g,
                  double inv_n))
// ops/embedding/cuda/embedding.cu
EMBER_CUDA_KERNEL(embedding, Tensor(const Tensor& weight, const Tensor& ids))
EMBER_CUDA_KERNEL(embedding_backward, Tensor(const Tensor& g, const Tensor& ids, int64_t num_embeddings))
// ops/dropout/cuda/dropout.cu: the same mask as the CPU for the same seed (dropout_keep)
EMBER_CUDA_KERNEL(dropout, Tensor(const Tensor& x, double p, uint64_t seed, Tensor* mask))
// ops/select/cuda/scan.cu and topk.cu: over contiguous rows
EMBER_CUDA_KERNEL(scan_rows, Tensor(const Tensor& rows, bool reverse))
EMBER_CUDA_KERNEL(topk_rows, TopK(const Tensor& rows, int64_t k, bool largest))
// ops/matmul/cuda/dispatch.cpp: a, b of at least 2 dims, broadcast over `batch`
EMBER_CUDA_KERNEL(matmul, Tensor(const Tensor& a, const Tensor& b, const Shape& batch, const MatmulOptions& opt))
// ops/attention/cuda/dispatch.cpp: contiguous q, k, v, out, lse (and p / ds for Standard)
EMBER_CUDA_KERNEL(attention_forward, void(const AttentionDims& dm, bool flash, const Tensor& q, const Tensor& k,
                  const Tensor& v, const Tensor& p, const Tensor& out, const Tensor& lse))
EMBER_CUDA_KERNEL(attention_backward, void(const AttentionDims& dm, bool flash, const Tensor& q, const Tensor& k,
                  const Tensor& v, const Tensor& out, const Tensor& aux, const Tensor& dout, const Tensor& ds,
                  const Tensor& dq, const Tensor& dk, const Tensor& dv))

}  // namespace ember::cuda_kernels

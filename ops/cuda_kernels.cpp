#include "ops/cuda_kernels.h"

namespace ember::cuda_kernels {

BackendHook<void(const Tensor&, const Tensor&)> copy_strided("cuda copy_strided");
BackendHook<Tensor(UnaryOp, const Tensor&)> unary("cuda unary");
BackendHook<Tensor(UnaryParamOp, const Tensor&, double, double)> unary_param("cuda unary_param");
BackendHook<Tensor(BinaryOp, const Tensor&, const Tensor&, const Shape&)> binary("cuda binary");
BackendHook<Tensor(const Tensor&, const Tensor&, const Tensor&, const Shape&)> where("cuda where");
BackendHook<Tensor(const Tensor&, DType)> cast("cuda cast");
BackendHook<Tensor(const Tensor&, int64_t, int64_t, int64_t)> sum_dim("cuda sum_dim");
BackendHook<Tensor(const Tensor&, int64_t, int64_t, int64_t, bool)> max_dim("cuda max_dim");
BackendHook<Tensor(const Tensor&, int64_t)> softmax("cuda softmax");
BackendHook<Tensor(const Tensor&, int64_t)> log_softmax("cuda log_softmax");
BackendHook<Tensor(const Tensor&, int64_t)> logsumexp("cuda logsumexp");
BackendHook<Tensor(const Tensor&, const Tensor&, const Tensor&, double, Tensor*, Tensor*)> layer_norm("cuda layer_norm");
BackendHook<Tensor(const Tensor&, const Tensor&, const Tensor&, double, Tensor*, Tensor*, Tensor*)> batch_norm_train(
    "cuda batch_norm_train");
BackendHook<Tensor(const PoolGeometry&, const Tensor&, Tensor*)> max_pool2d("cuda max_pool2d");
BackendHook<Tensor(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor&)> conv2d_forward("cuda conv2d_forward");
BackendHook<Tensor(const ConvGeometry&, const Tensor&, const Tensor&)> conv2d_input_grad("cuda conv2d_input_grad");
BackendHook<Tensor(const ConvGeometry&, const Tensor&, const Tensor&)> conv2d_weight_grad("cuda conv2d_weight_grad");
BackendHook<Tensor(const Tensor&, int64_t, const Tensor&)> gather("cuda gather");
BackendHook<Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&)> scatter_add("cuda scatter_add");
BackendHook<Tensor(const Tensor&, int64_t, DType)> one_hot("cuda one_hot");
BackendHook<Tensor(const Tensor&)> nonzero("cuda nonzero");
BackendHook<Tensor(const Tensor&, Tensor*, Tensor*)> prod_rows("cuda prod_rows");
BackendHook<Tensor(const Tensor&, const Tensor&)> cross_entropy("cuda cross_entropy");
BackendHook<Tensor(const Tensor&, const Tensor&, const Tensor&, double)> cross_entropy_backward(
    "cuda cross_entropy_backward");
BackendHook<Tensor(const Tensor&, const Tensor&)> embedding("cuda embedding");
BackendHook<Tensor(const Tensor&, const Tensor&, int64_t)> embedding_backward("cuda embedding_backward");
BackendHook<Tensor(const Tensor&, double, uint64_t, Tensor*)> dropout("cuda dropout");
BackendHook<Tensor(const Tensor&, bool)> scan_rows("cuda scan_rows");
BackendHook<TopK(const Tensor&, int64_t, bool)> topk_rows("cuda topk_rows");
BackendHook<Tensor(const Tensor&, const Tensor&, const Shape&, const MatmulOptions&)> matmul("cuda matmul");
BackendHook<void(const AttentionDims&, bool, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                 const Tensor&)>
    attention_forward("cuda attention_forward");
BackendHook<void(const AttentionDims&, bool, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                 const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&)>
    attention_backward("cuda attention_backward");

}  // namespace ember::cuda_kernels

// Helpers shared by attention.cpp and composite.cpp (not part of the public API).
#pragma once
#include "ops/attention/attention.h"

namespace ember::attention_detail {

double effective_scale(const AttentionOptions& opt, int64_t d);
// Checks q (..., Nq, d), k and v (..., Nk, d), dtypes, devices and the options; names `op`.
void check_qkv(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt);

Tensor causal_mask(int64_t nq, int64_t nk, DType dtype, Device device);  // 1 where key j is hidden from query i
Tensor probs_composite(const Tensor& q, const Tensor& k, const AttentionOptions& opt);
AttentionGrads backward_composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                  const Tensor& dout, const AttentionOptions& opt);
Tensor jvp_composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& tq, const Tensor& tk,
                     const Tensor& tv, const AttentionOptions& opt);

}  // namespace ember::attention_detail

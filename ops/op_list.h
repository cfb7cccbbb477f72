// The op table of Ember's own primitives. Each family declares its primitives in one place (a
// function-local struct of Primitive objects, built on first use); builtin_ops() builds them all,
// so that the table is complete before anyone lists it, whatever the program has called so far.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "framework/core/autograd/primitive.h"

namespace ember {

// Every built-in primitive, in declaration order.
std::vector<std::shared_ptr<const OpInfo>> builtin_ops();
// The primitive named `name`, built-in or custom; nullptr when none.
std::shared_ptr<const OpInfo> find_primitive(const std::string& name);

// The one way to choose a kernel variant: while alive, every application of `op` on this thread
// whose device has `variant` runs it (elsewhere the default kernel). The innermost scope for an op
// wins, and one naming the default ("" or "auto") hides the outer ones. Options that name a variant
// (MatmulOptions::impl, AttentionOptions::impl) open one around their call, so they win over an
// enclosing scope. ember::Error (from parse_variant_any_device) if the op has no such variant on
// any device.
class ScopedVariant {
 public:
  ScopedVariant(const std::string& op, const std::string& variant);
  // For an op at hand and a name its caller has parsed already: no lookup, no check.
  ScopedVariant(const OpInfo& op, const std::string& variant);
  ~ScopedVariant();
  ScopedVariant(const ScopedVariant&) = delete;
  ScopedVariant& operator=(const ScopedVariant&) = delete;
};

// One per op family (ops/<family>/*.cpp), called by builtin_ops().
void declare_unary_ops();
void declare_binary_ops();
void declare_view_ops();
void declare_copy_ops();
void declare_reduce_ops();
void declare_matmul_ops();
void declare_linear_ops();
void declare_softmax_ops();
void declare_norm_ops();
void declare_loss_ops();
void declare_embedding_ops();
void declare_dropout_ops();
void declare_topk_ops();
void declare_scan_ops();
void declare_index_ops();
void declare_sparse_ops();
void declare_attention_ops();
void declare_conv_ops();
void declare_pool_ops();
void declare_batch_norm_ops();

}  // namespace ember

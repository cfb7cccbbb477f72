#include "ops/op_list.h"

namespace ember {

std::vector<std::shared_ptr<const OpInfo>> builtin_ops() {
  static const bool declared = [] {
    declare_unary_ops();
    declare_binary_ops();
    declare_view_ops();
    declare_copy_ops();
    declare_reduce_ops();
    declare_matmul_ops();
    declare_linear_ops();
    declare_softmax_ops();
    declare_norm_ops();
    declare_loss_ops();
    declare_embedding_ops();
    declare_dropout_ops();
    declare_topk_ops();
    declare_scan_ops();
    declare_index_ops();
    declare_sparse_ops();
    declare_attention_ops();
    declare_conv_ops();
    declare_pool_ops();
    declare_batch_norm_ops();
    return true;
  }();
  (void)declared;
  std::vector<std::shared_ptr<const OpInfo>> out;
  for (auto& op : registered_ops())
    if (op->builtin) out.push_back(op);
  return out;
}

std::shared_ptr<const OpInfo> find_primitive(const std::string& name) {
  builtin_ops();  // built-ins exist from here on, whatever the program has called so far
  return find_op(name);
}

ScopedVariant::ScopedVariant(const std::string& op, const std::string& variant) {
  auto info = find_primitive(op);
  EMBER_CHECK(info, "ScopedVariant: no primitive named '", op, "'");
  parse_variant_any_device(*info, variant);
  primitive_detail::push_variant_override(info.get(), variant);  // the table keeps info alive
}
ScopedVariant::ScopedVariant(const OpInfo& op, const std::string& variant) {
  primitive_detail::push_variant_override(&op, variant);
}
ScopedVariant::~ScopedVariant() { primitive_detail::pop_variant_override(); }

}  // namespace ember

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
    declare_sparse_ops();
    declare_attention_ops();
    return true;
  }();
  (void)declared;
  std::vector<std::shared_ptr<const OpInfo>> out;
  for (auto& op : registered_ops())
    if (op->builtin) out.push_back(op);
  return out;
}

}  // namespace ember

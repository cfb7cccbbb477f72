// CustomOp is the public face of Primitive<NoAttrs>: the same declaration, recording and op-table
// entry as Ember's own ops, with the per-input rule signature that the custom-op docs promise.
#include "framework/core/custom_op.h"

#include "framework/core/autograd/primitive.h"

namespace ember {

struct CustomOp::Def {
  explicit Def(const std::string& name) : prim(name, /*builtin=*/false) {}
  Primitive<NoAttrs> prim;
};

namespace {
// Adapts a kernel that sees only the inputs.
Primitive<NoAttrs>::Kernel adapt(CustomKernel k) {
  return [k = std::move(k)](const Args& in, const NoAttrs&) { return KernelOut(k(in)); };
}
}  // namespace

CustomOp::CustomOp(const std::string& name) {
  EMBER_CHECK(!name.empty(), "CustomOp: the name must not be empty");
  def_ = std::make_shared<Def>(name);
  name_ = name;
}

CustomOp& CustomOp::cpu(CustomKernel kernel) {
  def_->prim.cpu(adapt(std::move(kernel)));
  return *this;
}
CustomOp& CustomOp::cuda(CustomKernel kernel) {
  def_->prim.cuda(adapt(std::move(kernel)));
  return *this;
}
CustomOp& CustomOp::vjp(CustomVjp rule) {
  def_->prim.vjp([rule = std::move(rule), op = &def_->prim](const Tensor& g, const OpCall<NoAttrs>& c) {
    Grads out(c.in.size());
    for (size_t i = 0; i < c.in.size(); ++i) {
      if (!c.needs(i)) continue;
      out[i] = rule(g, int(i), c.in, c.out);
      primitive_detail::check_rule_result(op->info(), "vjp", out[i], c.in[i].shape(), c.in[i].dtype(), "input", i);
    }
    return out;
  });
  return *this;
}
CustomOp& CustomOp::vjp_all(CustomVjpAll rule) {
  def_->prim.vjp([rule = std::move(rule)](const Tensor& g, const OpCall<NoAttrs>& c) {
    std::vector<bool> needs(c.in.size());
    for (size_t i = 0; i < c.in.size(); ++i) needs[i] = c.needs(i);
    return rule(g, needs, c.in, c.out);
  });
  return *this;
}
CustomOp& CustomOp::jvp(CustomJvp rule) {
  def_->prim.jvp([rule = std::move(rule)](const Args& t, const OpCall<NoAttrs>& c) { return rule(t, c.in, c.out); });
  return *this;
}

const std::string& CustomOp::name() const { return name_; }
bool CustomOp::has_jvp() const { return def_->prim.info().has_jvp; }

Tensor CustomOp::operator()(const std::vector<Tensor>& inputs) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    EMBER_CHECK(inputs[i].defined(), "custom op '", name_, "': input ", i, " is undefined");
  return def_->prim(inputs);
}

std::vector<std::string> custom_op_names() {
  std::vector<std::string> names;
  for (const auto& op : registered_ops())
    if (!op->builtin) {
      const std::string& n = op->name;
      bool seen = false;
      for (const auto& m : names) seen = seen || m == n;
      if (!seen) names.push_back(n);
    }
  return names;
}

}  // namespace ember

#include "framework/custom_op.h"

#include <mutex>
#include <set>

#include "framework/autograd/autograd.h"
#include "ops/elementwise/elementwise.h"

namespace ember {

struct CustomOp::Def {
  std::string name;
  const char* node_name = "";  // interned: trace nodes keep a const char* that outlives this Def
  CustomKernel cpu, cuda;
  CustomVjp vjp;
  CustomJvp jvp;
};

namespace {

std::mutex g_names_mutex;
std::set<std::string>& interned() {
  static std::set<std::string> names;  // std::set never moves its strings: c_str() stays valid
  return names;
}
std::vector<std::string>& defined_in_order() {
  static std::vector<std::string> names;
  return names;
}

const char* intern(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_names_mutex);
  auto [it, fresh] = interned().insert(name);
  if (fresh) defined_in_order().push_back(name);
  return it->c_str();
}

Tensor run_kernel(const CustomOp::Def& d, const std::vector<Tensor>& inputs) {
  Device dev = inputs.empty() ? Device::CPU : inputs[0].device();
  const CustomKernel& k = dev == Device::CUDA ? d.cuda : d.cpu;
  EMBER_CHECK(k, "custom op '", d.name, "': no ", name(dev), " kernel was given (use .", name(dev), "(...))");
  Tensor out = k(inputs);
  EMBER_CHECK(out.defined(), "custom op '", d.name, "': the ", name(dev), " kernel returned an undefined tensor");
  return out;
}

void check_result(const CustomOp::Def& d, const char* rule, const Tensor& r, const Tensor& like, const char* what, int i) {
  EMBER_CHECK(r.defined(), "custom op '", d.name, "': the ", rule, " rule returned an undefined tensor for ", what, " ", i);
  EMBER_CHECK(r.shape() == like.shape() && r.dtype() == like.dtype(), "custom op '", d.name, "': the ", rule,
              " rule returned ", r.dtype(), to_string(r.shape()), " for ", what, " ", i, ", expected ", like.dtype(),
              to_string(like.shape()));
}

// Forward mode without a JVP rule: J_i t_i is the transpose of the linear map g -> vjp(g, i),
// which is the VJP of that map (taken at g = 0; any point gives the same, as the map is linear).
Tensor jvp_by_transposing_vjp(const CustomOp::Def& d, const std::vector<Tensor>& tangents,
                              const std::vector<Tensor>& inputs, const Tensor& output) {
  Tensor out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!tangents[i].defined()) continue;
    auto [gi, transpose] = make_vjp([&](const Tensor& g) { return d.vjp(g, int(i), inputs, output); }, zeros_like(output));
    check_result(d, "vjp", gi, inputs[i], "input", int(i));
    Tensor ti = transpose(tangents[i]);
    out = out.defined() ? out + ti : ti;
  }
  return out;
}

Tensor apply(const std::shared_ptr<CustomOp::Def>& def, const std::vector<Tensor>& inputs) {
  const CustomOp::Def& d = *def;
  auto r = autograd::record(
      d.node_name, inputs, [&](const autograd::Args& a) { return apply(def, a); },
      [&](const Tensor& out, const autograd::Args& a) -> autograd::VjpFn {
        EMBER_CHECK(d.vjp, "custom op '", d.name, "': no VJP rule was given (use .vjp(...)), so it cannot be "
                    "differentiated in reverse mode");
        return [def, a, out](const Tensor& g, int i) {
          Tensor gi = def->vjp(g, i, a, out);
          check_result(*def, "vjp", gi, a[size_t(i)], "input", i);
          return gi;
        };
      },
      [&](const autograd::Args& t, const Tensor& out, const autograd::Args& a) {
        EMBER_CHECK(d.jvp || d.vjp, "custom op '", d.name, "': neither a JVP nor a VJP rule was given");
        Tensor to = d.jvp ? d.jvp(t, a, out) : jvp_by_transposing_vjp(d, t, a, out);
        check_result(d, "jvp", to, out, "the output", 0);
        return to;
      });
  return r ? *r : run_kernel(d, inputs);
}

}  // namespace

CustomOp::CustomOp(const std::string& name) : def_(std::make_shared<Def>()) {
  EMBER_CHECK(!name.empty(), "CustomOp: the name must not be empty");
  def_->name = name;
  def_->node_name = intern(name);
}

CustomOp& CustomOp::cpu(CustomKernel kernel) {
  def_->cpu = std::move(kernel);
  return *this;
}
CustomOp& CustomOp::cuda(CustomKernel kernel) {
  def_->cuda = std::move(kernel);
  return *this;
}
CustomOp& CustomOp::vjp(CustomVjp rule) {
  def_->vjp = std::move(rule);
  return *this;
}
CustomOp& CustomOp::jvp(CustomJvp rule) {
  def_->jvp = std::move(rule);
  return *this;
}

const std::string& CustomOp::name() const { return def_->name; }
bool CustomOp::has_jvp() const { return bool(def_->jvp); }

Tensor CustomOp::operator()(const std::vector<Tensor>& inputs) const {
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(inputs[i].defined(), "custom op '", def_->name, "': input ", i, " is undefined");
    EMBER_CHECK(inputs[i].device() == inputs[0].device(), "custom op '", def_->name, "': input ", i, " is on ",
                inputs[i].device(), " but input 0 is on ", inputs[0].device());
  }
  return apply(def_, inputs);
}

std::vector<std::string> custom_op_names() {
  std::lock_guard<std::mutex> lock(g_names_mutex);
  return defined_in_order();
}

}  // namespace ember

#include "framework/train/nn/module.h"

#include <unordered_map>

#include "framework/core/autograd/trace.h"

namespace ember::nn {

void Module::check_new_name(const std::string& name) const {
  EMBER_CHECK(!name.empty() && name.find('.') == std::string::npos, "Module: invalid name '", name,
              "' (names must be non-empty and must not contain '.')");
  for (const auto& [n, t] : params_) EMBER_CHECK(n != name, "Module: a parameter named '", name, "' already exists");
  for (const auto& [n, t] : buffers_) EMBER_CHECK(n != name, "Module: a buffer named '", name, "' already exists");
  for (const auto& [n, m] : children_) EMBER_CHECK(n != name, "Module: a submodule named '", name, "' already exists");
}

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  check_new_name(name);
  EMBER_CHECK(value.defined(), "Module: parameter '", name, "' is undefined");
  EMBER_CHECK(is_floating(value.dtype()), "Module: parameter '", name, "' must be float32 or float64, got ", value.dtype());
  // A fresh contiguous leaf: optimizers update parameters through flat loops over their data.
  Tensor p = value.detach().contiguous();
  p.requires_grad_();
  params_.emplace_back(name, p);
  return p;
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  check_new_name(name);
  EMBER_CHECK(value.defined(), "Module: buffer '", name, "' is undefined");
  Tensor b = value.detach().contiguous();
  buffers_.emplace_back(name, b);
  return b;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name);
  EMBER_CHECK(module != nullptr, "Module: submodule '", name, "' is null");
  module->train(training_);
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, NamedTensors& out, bool buffers) const {
  for (const auto& [n, t] : buffers ? buffers_ : params_) out.emplace_back(prefix + n, t);
  for (const auto& [n, m] : children_) m->collect(prefix + n + ".", out, buffers);
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  collect("", out, false);
  return out;
}

NamedTensors Module::named_buffers() const {
  NamedTensors out;
  collect("", out, true);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters()) out.push_back(t);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (auto& [name, t] : named_parameters()) n += t.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, m] : children_) m->train(on);
}

void Module::zero_grad() {
  for (auto& [n, t] : named_parameters()) t.zero_grad();
}

NamedTensors Module::state_dict() const {
  NamedTensors out;
  for (auto& [n, t] : named_parameters()) out.emplace_back(n, t.detach());
  for (auto& [n, t] : named_buffers()) out.emplace_back(n, t);
  return out;
}

void Module::load_state_dict(const NamedTensors& state, bool strict) {
  std::unordered_map<std::string, const Tensor*> given;
  for (const auto& [n, t] : state) {
    EMBER_CHECK(given.emplace(n, &t).second, "load_state_dict: the state holds '", n, "' twice");
  }
  NamedTensors mine = named_parameters();
  for (auto& nt : named_buffers()) mine.push_back(nt);
  // Check everything before writing anything, so that a failed load leaves the model untouched.
  size_t matched = 0;
  for (const auto& [n, p] : mine) {
    auto it = given.find(n);
    if (it == given.end()) {
      EMBER_CHECK(!strict, "load_state_dict: parameter '", n, "' (shape ", to_string(p.shape()), ", ", p.dtype(),
                  ") is missing from the state");
      continue;
    }
    const Tensor& s = *it->second;
    EMBER_CHECK(s.defined(), "load_state_dict: '", n, "' is undefined in the state");
    EMBER_CHECK(s.shape() == p.shape(), "load_state_dict: parameter '", n, "' has shape ", to_string(p.shape()),
                " in the model but ", to_string(s.shape()), " in the state");
    EMBER_CHECK(s.dtype() == p.dtype(), "load_state_dict: parameter '", n, "' is ", p.dtype(), " in the model but ",
                s.dtype(), " in the state");
    ++matched;
  }
  if (strict && matched != state.size()) {
    for (const auto& [n, t] : state) {
      bool known = false;
      for (const auto& [m, p] : mine) known = known || m == n;
      EMBER_CHECK(known, "load_state_dict: the state has '", n, "' (shape ", to_string(t.shape()),
                  ") but the model has no parameter of that name");
    }
  }
  autograd::NoGradGuard no_grad;
  for (auto& [n, p] : mine) {
    auto it = given.find(n);
    if (it != given.end()) p.copy_(*it->second);
  }
}

}  // namespace ember::nn

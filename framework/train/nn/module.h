// Module: the base of every layer and model. A module owns named parameters (leaf tensors with
// requires_grad_ set, so that loss.backward() fills their .grad()) and named submodules; it walks
// them recursively to list parameters under dotted names ("0.weight", "encoder.fc1.bias"), to
// switch train/eval mode, and to export or import its state as named tensors (for safetensors).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/core/tensor.h"

namespace ember {

// Named tensors in a fixed order (registration order for modules).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

namespace nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;  // parameters are shared handles; a copy would alias them silently
  Module& operator=(const Module&) = delete;

  // Most layers map one tensor to one tensor; modules with other signatures add their own methods.
  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }

  // Every parameter of this module and its submodules, under dotted names, in registration order.
  // The tensors are the parameters themselves (same storage, same autograd leaf), not copies.
  NamedTensors named_parameters() const;
  std::vector<Tensor> parameters() const;
  int64_t num_parameters() const;  // total element count
  // Every buffer (state that is not trained, such as BatchNorm's running statistics), likewise.
  NamedTensors named_buffers() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }

  // Training mode (dropout active) or evaluation mode, for this module and every submodule.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  void zero_grad();  // drops every parameter's accumulated gradient

  // The parameters' values without autograd boxes (sharing storage with the parameters), then
  // the buffers'.
  NamedTensors state_dict() const;
  // Copies values into the parameters. Every name, shape and dtype must match (the message names
  // the first one that differs); with strict=false names absent from `state` are left as they are
  // and extra names are ignored, but shapes and dtypes of the names present must still match.
  void load_state_dict(const NamedTensors& state, bool strict = true);

  virtual std::string name() const = 0;  // the layer type, e.g. "Linear(784, 256)"

 protected:
  // Marks `value` as a trainable leaf and registers it; returns the handle to keep as a member.
  Tensor register_parameter(const std::string& name, Tensor value);
  // Registers state that the module updates itself (no gradient), saved and loaded with the
  // parameters; returns the handle to keep as a member (it shares storage with the registered one).
  Tensor register_buffer(const std::string& name, Tensor value);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name) const;
  void collect(const std::string& prefix, NamedTensors& out, bool buffers) const;

  NamedTensors params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

}  // namespace nn
}  // namespace ember

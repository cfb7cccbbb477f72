#include "framework/train/optim/optimizer.h"

#include <cmath>
#include <unordered_map>

#include "framework/core/autograd/node.h"
#include "framework/core/autograd/trace.h"

namespace ember::optim {

Optimizer::Optimizer(std::vector<ParamGroup> groups, double lr) : lr_(lr) {
  std::vector<Tensor> params;
  for (size_t k = 0; k < groups.size(); ++k) {
    const double wd = groups[k].weight_decay;
    EMBER_CHECK(std::isfinite(wd) && wd >= 0, "optimizer: weight_decay must be finite and >= 0, got ", wd,
                groups.size() > 1 ? str(" in parameter group ", k) : std::string());
    for (Tensor& p : groups[k].params) {
      params.push_back(std::move(p));
      weight_decay_.push_back(wd);
    }
  }
  EMBER_CHECK(!params.empty(), "optimizer: the parameter list is empty");
  EMBER_CHECK(std::isfinite(lr) && lr >= 0, "optimizer: learning rate must be finite and >= 0, got ", lr);
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    EMBER_CHECK(p.defined(), "optimizer: parameter ", i, " is undefined");
    EMBER_CHECK(p.requires_grad() && p.is_traced(), "optimizer: parameter ", i, " (shape ", to_string(p.shape()),
                ") does not require gradients; call requires_grad_() on it (Module parameters already do)");
    // backward() fills .grad() only on leaves; a computed tensor would never be updated.
    bool leaf = false;
    for (TensorImpl* q = p.impl(); q && q->node; q = q->inner.get())
      if (q->trace == autograd::kEagerTrace) leaf = q->node->is_leaf;
    EMBER_CHECK(leaf, "optimizer: parameter ", i, " (shape ", to_string(p.shape()),
                ") is computed from other tensors, not a leaf; pass the tensors you called requires_grad_() on");
    for (size_t j = 0; j < i; ++j)
      EMBER_CHECK(params[j].impl() != p.impl(), "optimizer: parameter ", i, " is the same tensor as parameter ", j,
                  groups.size() > 1 ? " (a parameter may be in one group only)" : "");
    Tensor raw = p.detach();
    EMBER_CHECK(raw.is_contiguous(), "optimizer: parameter ", i, " is not contiguous (shape ", to_string(raw.shape()), ")");
    leaves_.push_back(p);
    params_.push_back(raw);
  }
}

double Optimizer::weight_decay(size_t i) const {
  EMBER_CHECK(i < weight_decay_.size(), "optimizer: no parameter ", i, " (it holds ", weight_decay_.size(), ")");
  return weight_decay_[i];
}

void Optimizer::set_lr(double lr) {
  EMBER_CHECK(std::isfinite(lr) && lr >= 0, "optimizer: learning rate must be finite and >= 0, got ", lr);
  lr_ = lr;
}

std::vector<Tensor>& Optimizer::add_buffer(const std::string& name) {
  std::vector<Tensor> b;
  for (const Tensor& p : params_) b.push_back(zeros_like(p));
  buffers_.emplace_back(name, std::move(b));
  return buffers_.back().second;
}

void Optimizer::step() {
  autograd::NoGradGuard no_grad;
  EMBER_CHECK(step_ < kMaxSteps, "optimizer: ", step_, " updates done, the most an int64 step count holds");
  ++step_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = leaves_[i].grad();
    if (!g.defined()) continue;
    g = g.detach();
    EMBER_CHECK(g.shape() == params_[i].shape() && g.dtype() == params_[i].dtype(), "optimizer: the gradient of parameter ",
                i, " has shape ", to_string(g.shape()), " ", g.dtype(), ", expected ", to_string(params_[i].shape()), " ",
                params_[i].dtype());
    if (fused_ && params_[i].device() == Device::CPU) update_fused(i, params_[i], g.contiguous(), step_);
    else update_ops(i, params_[i], g, step_);
    params_[i].impl()->storage->mark_written("optimizer step");  // a graph that saved it is stale now
  }
}

void Optimizer::zero_grad() {
  for (Tensor& p : leaves_) p.zero_grad();
}

NamedTensors Optimizer::state_dict() const {
  NamedTensors out;
  out.emplace_back("step", from_vector(std::vector<int64_t>{step_}, Shape{}));
  out.emplace_back("lr", from_vector(std::vector<double>{lr_}, Shape{}));
  for (const auto& [name, bufs] : buffers_)
    for (size_t i = 0; i < bufs.size(); ++i) out.emplace_back(name + "." + std::to_string(i), bufs[i]);
  return out;
}

void Optimizer::load_state_dict(const NamedTensors& state) {
  NamedTensors mine = state_dict();
  std::unordered_map<std::string, const Tensor*> given;
  for (const auto& [n, t] : state)
    EMBER_CHECK(given.emplace(n, &t).second, "optimizer ", kind(), ": the state holds '", n, "' twice");
  for (const auto& [n, t] : mine) {
    auto it = given.find(n);
    EMBER_CHECK(it != given.end(), "optimizer ", kind(), ": state entry '", n, "' is missing (was the checkpoint written by ",
                "another optimizer or for a different model?)");
    const Tensor& s = *it->second;
    EMBER_CHECK(s.shape() == t.shape(), "optimizer ", kind(), ": state entry '", n, "' has shape ", to_string(s.shape()),
                ", expected ", to_string(t.shape()));
    EMBER_CHECK(s.dtype() == t.dtype(), "optimizer ", kind(), ": state entry '", n, "' is ", s.dtype(), ", expected ", t.dtype());
  }
  for (const auto& [n, t] : state) {
    bool known = false;
    for (const auto& [m, u] : mine) known = known || m == n;
    EMBER_CHECK(known, "optimizer ", kind(), ": the state has '", n, "', which this optimizer does not keep");
  }
  // The step is read as the int64 it is: item() goes through a double, which rounds counts above
  // 2^53, and a wrong t changes Adam's bias correction on every later update.
  const int64_t step = *given.at("step")->to(Device::CPU).contiguous().data<int64_t>();
  EMBER_CHECK(step >= 0 && step < kMaxSteps, "optimizer ", kind(), ": state entry 'step' is ", step,
              ", expected an update count from 0 to ", kMaxSteps - 1);
  const double lr = given.at("lr")->item();
  EMBER_CHECK(std::isfinite(lr) && lr >= 0, "optimizer ", kind(), ": state entry 'lr' is ", lr,
              ", expected a finite learning rate >= 0");
  set_lr(lr);
  step_ = step;
  autograd::NoGradGuard no_grad;
  for (auto& [name, bufs] : buffers_)
    for (size_t i = 0; i < bufs.size(); ++i) bufs[i].copy_(*given.at(name + "." + std::to_string(i)));
}

}  // namespace ember::optim

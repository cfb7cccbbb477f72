// Optimizer: updates parameters in place from the gradients that loss.backward() left in their
// .grad(). Updates are not recorded by autograd. On the CPU they run as one fused loop per
// parameter; on other devices they are composed from Ember's ops (same arithmetic).
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "framework/core/tensor.h"
#include "framework/train/nn/module.h"
#include "framework/train/optim/param_group.h"

namespace ember::optim {

class Optimizer {
 public:
  // Every parameter must be a leaf with requires_grad_() set (as Module parameters are), and in
  // one group only. The parameters are numbered across the groups in order (state_dict's indices).
  Optimizer(std::vector<ParamGroup> groups, double lr);
  virtual ~Optimizer() = default;

  // One update from the current gradients; parameters without a gradient are left unchanged.
  void step();
  void zero_grad();  // drops every parameter's gradient

  double lr() const { return lr_; }
  void set_lr(double lr);
  int64_t steps() const { return step_; }  // updates done so far
  // The step count never reaches INT64_MAX, so that the next ++step cannot overflow.
  static constexpr int64_t kMaxSteps = INT64_MAX;
  const std::vector<Tensor>& params() const { return params_; }
  double weight_decay(size_t i) const;  // parameter i's, from its group; ember::Error past the last
  virtual std::string kind() const = 0;  // "sgd", "adam", "adamw"

  // The whole state as named tensors, for checkpoints: "step" (int64), "lr" (float64) and each
  // per-parameter buffer as "<buffer>.<parameter index>". load_state_dict checks every name, shape
  // and dtype against this optimizer's own before it writes anything.
  NamedTensors state_dict() const;
  void load_state_dict(const NamedTensors& state);

  // Forces the op-composed update path on the CPU too (tests compare it with the fused loops).
  void set_use_fused(bool on) { fused_ = on; }

 protected:
  // Registers a per-parameter buffer (zeros like each parameter), e.g. "exp_avg".
  std::vector<Tensor>& add_buffer(const std::string& name);
  // Update parameter i with gradient g (same shape and dtype as the parameter); `t` is the 1-based step.
  virtual void update_fused(size_t i, const Tensor& p, const Tensor& g, int64_t t) = 0;
  virtual void update_ops(size_t i, const Tensor& p, const Tensor& g, int64_t t) = 0;

  std::vector<Tensor> params_;  // raw (unboxed) views of the parameters' data
  std::vector<Tensor> leaves_;  // the parameters as given, to read their gradients
  std::vector<double> weight_decay_;  // per parameter
  double lr_;
  int64_t step_ = 0;

 private:
  // A deque, so that the references add_buffer hands out stay valid as buffers are added.
  std::deque<std::pair<std::string, std::vector<Tensor>>> buffers_;
  bool fused_ = true;
};

}  // namespace ember::optim

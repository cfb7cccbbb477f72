// The public autodiff API: reverse mode (make_vjp, grad, value_and_grad), forward mode (make_jvp),
// and the walk over a trace that both make_vjp and Tensor::backward() use.
#pragma once
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "framework/core/autograd/trace.h"

namespace ember {

using Fn1 = std::function<Tensor(const Tensor&)>;
using FnN = std::function<Tensor(const std::vector<Tensor>&)>;
using FnNM = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// The VJP of a traced function: maps output cotangents to input cotangents. Callable many times.
class VjpFunction {
 public:
  // One cotangent per output, each of that output's shape and dtype; one result per input
  // (zeros for inputs the outputs do not depend on).
  std::vector<Tensor> operator()(const std::vector<Tensor>& cotangents) const;

 private:
  friend std::pair<std::vector<Tensor>, VjpFunction> make_vjp(const FnNM&, const std::vector<Tensor>&);
  std::vector<std::shared_ptr<autograd::Node>> outputs_;  // null where an output is not traced
  std::vector<Shape> out_shapes_;
  std::vector<DType> out_dtypes_;
  std::vector<Tensor> inputs_;  // for the shapes of zero cotangents
  std::vector<std::shared_ptr<autograd::Node>> leaves_;
};

// Runs f once on boxed copies of xs, recording a trace; returns f's outputs and their VJP.
std::pair<std::vector<Tensor>, VjpFunction> make_vjp(const FnNM& f, const std::vector<Tensor>& xs);
// Single input and output: vjp(g) is the input's cotangent.
std::pair<Tensor, Fn1> make_vjp(const Fn1& f, const Tensor& x);

// Gradient of a function with a one-element output, with respect to input `argnum`.
Fn1 grad(const Fn1& f);
FnN grad(const FnN& f, int argnum = 0);
std::function<std::pair<Tensor, Tensor>(const Tensor&)> value_and_grad(const Fn1& f);
// Gradients with respect to every input.
std::function<std::pair<Tensor, std::vector<Tensor>>(const std::vector<Tensor>&)> value_and_grads(const FnN& f);

// Forward mode: f's outputs and the directional derivatives J v, through each primitive's JVP rule.
std::pair<std::vector<Tensor>, std::vector<Tensor>> make_jvp(const FnNM& f, const std::vector<Tensor>& xs,
                                                             const std::vector<Tensor>& vs);
std::pair<Tensor, Tensor> make_jvp(const Fn1& f, const Tensor& x, const Tensor& v);

namespace autograd {
// a + b through the recorded add (engine_ops.h: summing cotangents and tangents).
Tensor add_values(const Tensor& a, const Tensor& b);
// Visits the nodes reachable from `roots` in reverse topological order, pushing cotangents along
// edges (summing where a value fans out). Returns the cotangent that reached each node in
// `wanted`, undefined where none did.
std::vector<Tensor> backward_pass(const std::vector<std::shared_ptr<Node>>& roots, const std::vector<Tensor>& cotangents,
                                  const std::vector<std::shared_ptr<Node>>& wanted);
// Nodes reachable from roots, parents before children (the order a forward pass ran in).
std::vector<Node*> toposort(const std::vector<std::shared_ptr<Node>>& roots);

// One node's step of a backward pass: the cotangent summed into it from all its children, and what
// it sends each parent (undefined where the parent is not traced; empty for leaves).
struct BackwardStep {
  const Node* node = nullptr;
  Tensor cotangent;
  std::vector<Tensor> to_parents;
};
using BackwardObserver = std::function<void(const BackwardStep&)>;

// While alive, every backward pass on this thread reports each node it visits, in visit order.
// A study tool (autodiff_trace prints the adjoint trace with it); a pass without one pays one test.
class ObserveBackward {
 public:
  explicit ObserveBackward(BackwardObserver observer);
  ~ObserveBackward();
  ObserveBackward(const ObserveBackward&) = delete;
  ObserveBackward& operator=(const ObserveBackward&) = delete;

 private:
  BackwardObserver observer_;
  const BackwardObserver* prev_;
};
}  // namespace autograd

}  // namespace ember

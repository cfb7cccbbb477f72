// Custom ops: a new primitive defined outside the library. A CustomOp is a Primitive
// (framework/core/autograd/primitive.h) without attributes: the same declaration, recording and op-table
// entry as Ember's own ops, so make_vjp, grad, make_jvp, backward() and gradcheck all see one node
// per application, and grad of grad works.
//
//   static const ember::CustomOp softplus = ember::CustomOp("softplus")
//       .cpu([](const std::vector<ember::Tensor>& in) { /* raw loop over in[0] */ })
//       .vjp([](const ember::Tensor& g, int i, const std::vector<ember::Tensor>& in, const ember::Tensor& out) {
//         return g * ember::sigmoid(in[0]);
//       });
//   ember::Tensor y = softplus({x});
//
// The rules:
//  - kernels (cpu, cuda) receive untraced tensors, possibly non-contiguous views, and return a new
//    tensor; they run only on the device whose kernel they are.
//  - vjp(g, i, inputs, output) returns input i's cotangent, of input i's shape. Write it with Ember
//    ops (not a raw loop) so that it can be differentiated again: inputs, output and g may be
//    traced by an outer trace when derivatives of derivatives are taken.
//  - or vjp_all(g, needs, inputs, output) returns every input's cotangent at once (undefined where
//    needs[i] is false), for rules that share work between inputs.
//  - jvp(tangents, inputs, output) returns the output's tangent; tangents[i] is undefined where
//    input i carries none. Optional: without it, forward mode transposes the VJP (one extra
//    reverse pass through the VJP rule, which is linear in g).
//  - one output per op; an op with several results is several ops, or one op on a concatenation.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace ember {

using CustomKernel = std::function<Tensor(const std::vector<Tensor>& inputs)>;
using CustomVjp = std::function<Tensor(const Tensor& g, int i, const std::vector<Tensor>& inputs, const Tensor& output)>;
using CustomVjpAll = std::function<std::vector<Tensor>(const Tensor& g, const std::vector<bool>& needs,
                                                       const std::vector<Tensor>& inputs, const Tensor& output)>;
using CustomJvp =
    std::function<Tensor(const std::vector<Tensor>& tangents, const std::vector<Tensor>& inputs, const Tensor& output)>;

class CustomOp {
 public:
  // `name` labels the op's nodes in traces and its error messages.
  explicit CustomOp(const std::string& name);

  // Builder: each returns *this, so a definition reads as one expression.
  CustomOp& cpu(CustomKernel kernel);
  CustomOp& cuda(CustomKernel kernel);
  CustomOp& vjp(CustomVjp rule);
  CustomOp& vjp_all(CustomVjpAll rule);
  CustomOp& jvp(CustomJvp rule);

  // Applies the op: records one node when any input is traced, else runs the kernel of the
  // inputs' device. Inputs must be defined and on one device.
  Tensor operator()(const std::vector<Tensor>& inputs) const;
  Tensor operator()(const Tensor& x) const { return (*this)(std::vector<Tensor>{x}); }

  const std::string& name() const;
  bool has_jvp() const;

  struct Def;

 private:
  std::shared_ptr<Def> def_;  // shared: copies of a CustomOp are the same op
  std::string name_;
};

// The names of every custom op defined so far in this process, in definition order.
std::vector<std::string> custom_op_names();

}  // namespace ember

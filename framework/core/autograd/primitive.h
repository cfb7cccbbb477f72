// Primitive: the one way to define an op that autograd records, used by Ember's own ops and by
// user-defined ones (CustomOp is a thin face over it). A declaration names the op, gives one
// kernel per device (and named variants where a study compares several), says what the backward
// reads, and gives one VJP rule for all inputs at once, as HIPS Autograd's defvjp and PyTorch's
// derivatives.yaml do:
//
//   static const Primitive<DimAttrs> softmax_op = Primitive<DimAttrs>("softmax")
//       .cpu([](const Args& x, const DimAttrs& a) { return cpu::softmax(x[0], a.dim); })
//       .saves({}, /*output=*/true)
//       .vjp([](const Tensor& g, const OpCall<DimAttrs>& c) { return Grads{y * (g - sum(g * y, ...))}; })
//       .fused_vjp(Device::CPU, [](const Tensor& g, const OpCall<DimAttrs>& c) { ... one pass ... });
//
// The engine (this file) owns the plumbing: the device check and dispatch, boxing and recording,
// the saved values, forward mode (the JVP rule, or the VJP transposed when there is none), and the
// choice between the fused backward kernel and the composite rule (the fused one serves only when
// nothing it reads is traced, i.e. its result will not be differentiated again).
#pragma once
#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "framework/core/autograd/autocast.h"
#include "framework/core/autograd/op_table.h"
#include "framework/core/autograd/trace.h"

namespace ember {

using Args = std::vector<Tensor>;
using Grads = std::vector<Tensor>;  // one cotangent per input; undefined where none is needed
struct NoAttrs {};

// What a kernel returns: the op's value, and values only the backward reads (attention's
// logsumexp). Extras are never differentiated: a rule that must itself be differentiable
// recomputes what it needs from the inputs instead.
struct KernelOut {
  Tensor out;
  std::vector<Tensor> extras;
  KernelOut(Tensor t) : out(std::move(t)) {}  // NOLINT: a kernel may simply return its tensor
  KernelOut(Tensor t, std::vector<Tensor> e) : out(std::move(t)), extras(std::move(e)) {}
};

// What a rule sees of one application. In a VJP, `in` holds the saved inputs only (undefined
// elsewhere) and `out` the output if it was saved; in a JVP both are always there.
template <class A = NoAttrs>
struct OpCall {
  const A& attrs;
  const Args& in;
  const Tensor& out;
  const std::vector<Tensor>& extras;
  const autograd::Node& node;
  // Input i wants a cotangent (reverse mode) or carries a tangent (forward mode).
  bool needs(size_t i) const { return i < node.parents.size() && node.parents[i] != nullptr; }
  const Shape& in_shape(size_t i) const { return node.parents[i]->shape; }  // valid where needs(i)
  DType in_dtype(size_t i) const { return node.parents[i]->dtype; }
  const Shape& out_shape() const { return node.shape; }
};

// True while the engine runs a kernel whose application it records, so that a backward pass may
// read its extras. A kernel may skip extras that only the backward reads (layer_norm's row
// statistics) when false; extras that callers read (topk's indices) are always returned.
bool extras_wanted();

// While alive with enabled = false, backward passes on this thread use the composite VJP rules
// even where a fused kernel could serve (the tests compare the two).
class FusedBackwardGuard {
 public:
  explicit FusedBackwardGuard(bool enabled);
  ~FusedBackwardGuard();
  FusedBackwardGuard(const FusedBackwardGuard&) = delete;
  FusedBackwardGuard& operator=(const FusedBackwardGuard&) = delete;

 private:
  bool prev_;
};

namespace primitive_detail {
bool fused_enabled();
// Checks that every input is on one device and that each floating input's dtype is one the op declares.
Device device_of(const OpInfo& op, const Args& args);
// Sets extras_wanted() for its lifetime.
class ExtrasWanted {
 public:
  ExtrasWanted();
  ~ExtrasWanted();
  ExtrasWanted(const ExtrasWanted&) = delete;
  ExtrasWanted& operator=(const ExtrasWanted&) = delete;

 private:
  bool prev_;
};
void check_rule_result(const OpInfo& op, const char* rule, const Tensor& r, const Shape& shape, DType dtype,
                       const char* what, size_t i);
bool any_traced(const Tensor& g, const Args& in, const Tensor& out, const std::vector<Tensor>& extras);
Tensor add_tangents(const Tensor& acc, const Tensor& t);  // acc + t; t when acc is undefined
// The transpose of the linear map `lin` (from the node's output space), applied to t.
Tensor transpose_linear(const std::function<Tensor(const Tensor&)>& lin, const autograd::Node& node, const Tensor& t);
}  // namespace primitive_detail

template <class A = NoAttrs>
class Primitive {
 public:
  using Kernel = std::function<KernelOut(const Args&, const A&)>;
  using Vjp = std::function<Grads(const Tensor& g, const OpCall<A>&)>;
  using Jvp = std::function<Tensor(const Args& tangents, const OpCall<A>&)>;

  explicit Primitive(const std::string& name, bool builtin = true) : d_(std::make_shared<Def>()) {
    EMBER_CHECK(!name.empty(), "Primitive: the name must not be empty");
    d_->name = name;
    d_->label = builtin ? name : "custom op '" + name + "'";
    d_->node_name = primitive_detail::intern(name);
    d_->builtin = builtin;
    primitive_detail::add_to_table(d_);
  }

  // Builder: each returns *this, so a declaration reads as one expression.
  Primitive& cpu(Kernel k) { return kernel(Device::CPU, std::move(k)); }
  Primitive& cuda(Kernel k) { return kernel(Device::CUDA, std::move(k)); }
  Primitive& kernel(Device dev, Kernel k) {
    d_->kernels[size_t(dev)] = std::move(k);
    d_->kernel[size_t(dev)] = bool(d_->kernels[size_t(dev)]);
    return *this;
  }
  // One kernel for every device: for kernels that other kernels call too, whose device-independent
  // part (broadcast shapes, reduction geometry) ends in their own choice of the device's code.
  Primitive& all_devices(Kernel k) {
    kernel(Device::CPU, k);
    return kernel(Device::CUDA, std::move(k));
  }
  // Adds kernel variant `name` on `dev`, at declaration or any time later (a study registering its
  // kernels), while other threads may be applying the primitive. A ScopedVariant selects it.
  // ember::Error for an empty kernel, a reserved name ("" or "auto"), or one `dev` already has.
  Primitive& variant(Device dev, const std::string& name, Kernel k) {
    d_->add_variant(dev, name, std::move(k));
    return *this;
  }
  // Which inputs and whether the output the VJP reads; the node keeps only those alive.
  // Without a call, every input and the output are kept.
  Primitive& saves(const std::vector<int>& inputs, bool output) {
    d_->save_all_inputs = false;
    d_->saved_inputs.assign(inputs.begin(), inputs.end());
    d_->save_output = output;
    return *this;
  }
  Primitive& vjp(Vjp rule) {
    d_->vjp_rule = std::move(rule);
    d_->has_vjp = bool(d_->vjp_rule);
    return *this;
  }
  Primitive& jvp(Jvp rule) {
    d_->jvp_rule = std::move(rule);
    d_->has_jvp = bool(d_->jvp_rule);
    return *this;
  }
  // The same formula as the VJP in one kernel, for first-order gradients on `dev`.
  Primitive& fused_vjp(Device dev, Vjp rule) {
    d_->fused_rules[size_t(dev)] = std::move(rule);
    d_->fused[size_t(dev)] = bool(d_->fused_rules[size_t(dev)]);
    return *this;
  }
  Primitive& dtypes(std::initializer_list<DType> ds) {
    d_->dtypes.assign(ds.begin(), ds.end());
    return *this;
  }

  // Applies the primitive: records one node per trace that sees a boxed input, else runs the
  // kernel of the inputs' device.
  Tensor operator()(const Args& args, const A& attrs = A()) const { return apply(args, attrs).out; }
  KernelOut apply(const Args& args, const A& attrs = A()) const;

  const OpInfo& info() const { return *d_; }
  std::shared_ptr<const OpInfo> info_ptr() const { return d_; }

 private:
  struct Def : OpInfo {
    std::array<Kernel, 2> kernels;
    std::deque<Kernel> variant_kernels;  // by index in variants_; a deque keeps references valid as it grows
    Vjp vjp_rule;
    Jvp jvp_rule;
    std::array<Vjp, 2> fused_rules;
    bool save_all_inputs = true, save_output = true;
    std::vector<int> saved_inputs;

    void add_variant(Device dev, const std::string& v, Kernel k) {
      EMBER_CHECK(bool(k), label, ": the kernel of variant '", v, "' is empty");
      std::unique_lock<std::shared_mutex> lock(primitive_detail::variant_mutex());
      check_new_variant_locked(dev, v);
      variant_kernels.push_back(std::move(k));
      variants_.push_back({dev, v});
    }
    const Kernel* variant_kernel(Device dev, const std::string& v) const {
      std::shared_lock<std::shared_mutex> lock(primitive_detail::variant_mutex());
      std::ptrdiff_t i = find_variant_locked(dev, v);
      return i < 0 ? nullptr : &variant_kernels[size_t(i)];
    }
    KernelOut run(const Args& args, const A& attrs) const;
    Grads backward(const Tensor& g, const OpCall<A>& c) const;
    Tensor transposed_vjp(const Args& tangents, const OpCall<A>& c) const;
  };
  KernelOut apply_autocast(const Args& args, const A& attrs) const;
  std::shared_ptr<Def> d_;
};

// ---- the engine: how an application is run and recorded ----

template <class A>
KernelOut Primitive<A>::Def::run(const Args& args, const A& attrs) const {
  Device dev = primitive_detail::device_of(*this, args);
  // Without a ScopedVariant for this op (the usual case) no lock is taken and nothing allocated.
  const Kernel* k = nullptr;
  if (const std::string* v = primitive_detail::variant_override(this)) k = variant_kernel(dev, *v);
  if (!k) k = &kernels[size_t(dev)];
  if (!*k) primitive_detail::no_kernel(*this, dev);
  KernelOut r = (*k)(args, attrs);
  EMBER_CHECK(r.out.defined(), label, ": the ", dev, " kernel returned an undefined tensor");
  return r;
}

template <class A>
Grads Primitive<A>::Def::backward(const Tensor& g, const OpCall<A>& c) const {
  const Vjp& fused = fused_rules[size_t(g.device())];
  if (fused && primitive_detail::fused_enabled() && g.shape() == c.node.shape && g.dtype() == c.node.dtype &&
      !primitive_detail::any_traced(g, c.in, c.out, c.extras))
    return fused(g, c);
  return vjp_rule(g, c);
}

// Forward mode without a JVP rule: J_i t_i is the transpose of the linear map g -> vjp(g)_i.
template <class A>
Tensor Primitive<A>::Def::transposed_vjp(const Args& tangents, const OpCall<A>& c) const {
  EMBER_CHECK(vjp_rule, label, ": neither a JVP nor a VJP rule was given, so it cannot be differentiated");
  Tensor out;
  for (size_t i = 0; i < tangents.size(); ++i) {
    if (!tangents[i].defined()) continue;
    auto lin = [&](const Tensor& g) {
      Grads gs = vjp_rule(g, c);
      EMBER_CHECK(i < gs.size() && gs[i].defined(), label, ": the VJP rule returned no cotangent for input ", i);
      return gs[i];
    };
    out = primitive_detail::add_tangents(out, primitive_detail::transpose_linear(lin, c.node, tangents[i]));
  }
  return out;
}

// Under an autocast scope (autocast.h): the policy casts the inputs (recorded casts, so gradients
// reach the originals in their dtype), then the op runs with autocast suspended, so that kernels
// and rules calling other ops are not cast again.
template <class A>
KernelOut Primitive<A>::apply_autocast(const Args& args, const A& attrs) const {
  Args cast;
  const bool changed = autocast::detail::policy(*d_, args, cast);
  autocast::detail::Suspend off;
  return apply(changed ? cast : args, attrs);
}

template <class A>
KernelOut Primitive<A>::apply(const Args& args, const A& attrs) const {
  if (autocast::detail::active()) return apply_autocast(args, attrs);
  const Def& d = *d_;
  const int t = autograd::detail::top_trace(args);
  if (t == 0) return d.run(args, attrs);
  Args inner(args.size());
  if (!autograd::grad_enabled()) {
    for (size_t i = 0; i < args.size(); ++i) inner[i] = autograd::unbox_all(args[i]);
    return d.run(inner, attrs);
  }
  for (size_t i = 0; i < args.size(); ++i) inner[i] = autograd::unbox(args[i], t);
  KernelOut r = [&] {
    primitive_detail::ExtrasWanted wanted;
    return apply(inner, attrs);  // one trace level down: older traces record there
  }();
  auto node = autograd::detail::make_node(d.node_name, args, t, r.out);
  if (node->forward_mode) {
    Args tangents(args.size());
    for (size_t i = 0; i < args.size(); ++i)
      if (node->parents[i]) tangents[i] = node->parents[i]->tangent;
    OpCall<A> c{attrs, inner, r.out, r.extras, *node};
    Tensor tan = d.jvp_rule ? d.jvp_rule(tangents, c) : d.transposed_vjp(tangents, c);
    primitive_detail::check_rule_result(d, "jvp", tan, r.out.shape(), r.out.dtype(), "the output", 0);
    node->tangent = std::move(tan);
  } else {
    EMBER_CHECK(d.vjp_rule, d.label, ": no VJP rule was given, so it cannot be differentiated in reverse mode");
    if (!d.save_all_inputs)
      for (size_t i = 0; i < inner.size(); ++i)
        if (std::find(d.saved_inputs.begin(), d.saved_inputs.end(), int(i)) == d.saved_inputs.end()) inner[i] = Tensor();
    node->saved = std::move(inner);  // the same vector: no second allocation per node
    if (d.save_output) node->saved_out = r.out;
    node->extras = r.extras;
    node->vjp = [def = d_.get(), attrs](const Tensor& g, const autograd::Node& n) {
      return def->backward(g, OpCall<A>{attrs, n.saved, n.saved_out, n.extras, n});
    };
  }
  r.out = autograd::box(r.out, t, std::move(node));
  return r;
}

}  // namespace ember

#include "framework/train/functional/checkpoint.h"

#include "framework/core/autograd/autocast.h"
#include "framework/core/autograd/node.h"
#include "framework/core/autograd/trace.h"

namespace ember {

namespace {

// Restores the default generator's state for its lifetime (the recomputation's dropout masks).
class GeneratorAt {
 public:
  explicit GeneratorAt(const Generator& state) : saved_(default_generator()) { default_generator() = state; }
  ~GeneratorAt() { default_generator() = saved_; }

 private:
  Generator saved_;
};

// The autocast setting the forward ran under, which the replay in backward (where the engine
// suspends autocast) must run under too, or it would differentiate another computation.
struct AutocastAt {
  autocast::State state = autocast::state();
  bool active = autocast::detail::active();
};
struct ReplayAutocast {
  autocast::Guard guard;
  autocast::detail::Suspend lift;
  explicit ReplayAutocast(const AutocastAt& a) : guard(a.state.dtype, a.active), lift(false) {}
};

void check_same_result(const Tensor& y, const autograd::Node& n) {
  EMBER_CHECK(y.defined() && y.shape() == n.shape && y.dtype() == n.dtype, "checkpoint: the recomputation returned ",
              y.defined() ? str(y.dtype(), " ", to_string(y.shape())) : std::string("nothing"), " where the forward returned ",
              n.dtype, " ", to_string(n.shape), "; the function must be deterministic");
}

// Eager autograd (requires_grad_ leaves, loss.backward()): nothing of the forward is kept but its
// inputs and result; the VJP replays f on fresh leaves and runs a backward pass through the
// replay, which also fills the .grad of every parameter f captured, as PyTorch's checkpoint does.
// So a module's forward can be checkpointed without passing its parameters.
Tensor checkpoint_eager(const FnN& f, const std::vector<Tensor>& xs, const std::vector<Tensor>& inner, const Generator& rng,
                        const Tensor& out, const AutocastAt& amp) {
  auto node = autograd::detail::make_node("checkpoint", xs, autograd::kEagerTrace, out);
  node->saved = inner;  // what the replay reads; the version check guards it like any op's
  node->vjp = [f, rng, amp](const Tensor& g, const autograd::Node& n) {
    // The replay must record to be differentiated; under no_grad it would silently give zeros.
    EMBER_CHECK(autograd::grad_enabled(), "checkpoint: backward() ran with gradients disabled (inside no_grad), so "
                "the checkpointed function cannot be replayed for its gradient; call backward() outside no_grad");
    GeneratorAt at(rng);
    ReplayAutocast replay(amp);
    std::vector<Tensor> leaves(n.saved.size());
    std::vector<std::shared_ptr<autograd::Node>> wanted(n.saved.size());
    for (size_t i = 0; i < leaves.size(); ++i) {
      leaves[i] = n.saved[i].detach();
      if (n.parents[i]) {
        leaves[i].requires_grad_();
        wanted[i] = leaves[i].impl()->node;
      }
    }
    Tensor y = f(leaves);
    check_same_result(y, n);
    if (!y.is_traced()) return std::vector<Tensor>(leaves.size());  // f ignored its inputs
    return autograd::backward_pass({y.impl()->node}, {g}, wanted);
  };
  return autograd::box(out, autograd::kEagerTrace, std::move(node));
}

// A make_vjp/make_jvp trace: f runs on the inputs unboxed at that level (lower traces still record,
// so higher orders work) and is replayed under make_vjp in backward; every tensor it differentiates
// must be an input.
Tensor checkpoint_traced(const FnN& f, const std::vector<Tensor>& xs, const std::vector<Tensor>& inner, int t,
                         const Generator& rng, const AutocastAt& amp) {
  Tensor out = f(inner);
  EMBER_CHECK(out.defined(), "checkpoint: the function returned an undefined tensor");
  EMBER_CHECK(!(out.is_traced() && out.impl()->trace == t),
              "checkpoint: the function uses a tensor that this trace differentiates but that is not among its ",
              xs.size(), " inputs (a captured value of the function being differentiated?); pass every such tensor "
              "in the input list, so that the recomputation in backward can send it its gradient");
  auto as_list = [f](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; };
  auto node = autograd::detail::make_node("checkpoint", xs, t, out);
  if (node->forward_mode) {
    std::vector<Tensor> tangents(xs.size());
    for (size_t i = 0; i < xs.size(); ++i)
      tangents[i] = node->parents[i] ? node->parents[i]->tangent : zeros_like(inner[i]);
    GeneratorAt at(rng);
    node->tangent = make_jvp(as_list, inner, tangents).second[0];
  } else {
    node->saved = inner;
    node->vjp = [as_list, rng, amp](const Tensor& g, const autograd::Node& n) {
      GeneratorAt at(rng);
      ReplayAutocast replay(amp);
      auto [ys, back] = make_vjp(as_list, n.saved);
      check_same_result(ys[0], n);
      return back({g});
    };
  }
  return autograd::box(out, t, std::move(node));
}

}  // namespace

Tensor checkpoint(const FnN& f, const std::vector<Tensor>& xs) {
  EMBER_CHECK(f, "checkpoint: the function is empty");
  for (size_t i = 0; i < xs.size(); ++i) EMBER_CHECK(xs[i].defined(), "checkpoint: input ", i, " is undefined");
  if (!autograd::grad_enabled()) return f(xs);
  const Generator rng = default_generator();
  const int t = autograd::detail::top_trace(xs);
  std::vector<Tensor> inner(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) inner[i] = autograd::unbox(xs[i], t);
  const AutocastAt amp;
  if (t > autograd::kEagerTrace) return checkpoint_traced(f, xs, inner, t, rng, amp);
  // Eager, or no input tracked at all while f may use parameters that are (a module's forward on a
  // batch). f runs recording, only to see what it captured: the graph is dropped at once.
  Tensor out = f(inner);
  EMBER_CHECK(out.defined(), "checkpoint: the function returned an undefined tensor");
  const int out_trace = out.is_traced() ? out.impl()->trace : 0;
  if (out_trace > autograd::kEagerTrace) return f(xs);  // it captured a make_vjp-traced value: a plain call
  if (t == 0 && out_trace == 0) return out;             // nothing tracked anywhere
  return checkpoint_eager(f, xs, inner, rng, out.detach(), amp);
}

Tensor checkpoint(const Fn1& f, const Tensor& x) {
  EMBER_CHECK(f, "checkpoint: the function is empty");
  return checkpoint([f](const std::vector<Tensor>& in) { return f(in[0]); }, {x});  // a copy: backward calls it later
}

}  // namespace ember

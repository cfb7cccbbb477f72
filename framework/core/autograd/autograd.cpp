#include "framework/core/autograd/autograd.h"

#include <unordered_map>
#include <unordered_set>

#include "framework/core/autograd/autocast.h"
#include "framework/core/autograd/engine_ops.h"

namespace ember {
namespace autograd {

std::vector<Node*> toposort(const std::vector<std::shared_ptr<Node>>& roots) {
  // Iterative post-order DFS: GPT-sized graphs are deep enough to overflow a recursive one.
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  std::vector<std::pair<Node*, size_t>> stack;
  for (const auto& r : roots) {
    if (!r || !seen.insert(r.get()).second) continue;
    stack.push_back({r.get(), 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->parents.size()) {
        Node* p = node->parents[next++].get();
        if (p && seen.insert(p).second) stack.push_back({p, 0});
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
  return order;
}

namespace {
thread_local const BackwardObserver* t_observer = nullptr;
}  // namespace

ObserveBackward::ObserveBackward(BackwardObserver observer) : observer_(std::move(observer)), prev_(t_observer) {
  t_observer = &observer_;
}
ObserveBackward::~ObserveBackward() { t_observer = prev_; }

namespace engine_ops {
BackendHook<Tensor(const Tensor&, const Tensor&)> add("add (the engine's; filled by the ops library)");
BackendHook<Tensor(const Tensor&)> clone("copy (the engine's; filled by the ops library)");
}  // namespace engine_ops

Tensor add_values(const Tensor& a, const Tensor& b) { return engine_ops::add(a, b); }

namespace {
void accumulate(Tensor& slot, const Tensor& g) { slot = slot.defined() ? engine_ops::add(slot, g) : g; }

// A VJP reading a saved tensor that was overwritten in place after its node was recorded would
// return a gradient of values the forward never used; refuse, naming the op, the tensor and the
// writer (PyTorch's version-counter check, with one clock for all storages instead of a counter
// per tensor, so a node stores one number however many tensors it saved).
void check_saved_unchanged(const Node& node) {
  const size_t n = node.saved.size();
  for (size_t i = 0; i <= n; ++i) {
    const Tensor& t = i < n ? node.saved[i] : node.saved_out;
    if (!t.defined() || t.impl()->storage->version() <= node.recorded_at) continue;
    const std::string what = i < n ? "input " + std::to_string(i) : std::string("its output");
    throw Error(str("backward through '", node.op, "': ", what, " (", t.dtype(), " ", to_string(t.shape()),
                    "), saved for the gradient, was modified in place by '", t.impl()->storage->last_writer(),
                    "' after the forward pass used it, so the gradient would be wrong; modify a clone() "
                    "instead, or modify it after backward()"));
  }
}

std::vector<Tensor> run_backward(const std::vector<std::shared_ptr<Node>>& roots, const std::vector<Tensor>& cotangents,
                                 const std::vector<std::shared_ptr<Node>>& wanted, bool free_graph) {
  // The rules run in the dtypes the forward pass chose, even when backward() is called inside an
  // autocast scope: casting a cotangent would break the rule's dtype contract.
  autocast::detail::Suspend no_autocast;
  std::vector<Node*> order = toposort(roots);
  std::unordered_map<Node*, Tensor> cot;
  for (size_t i = 0; i < roots.size(); ++i)
    if (roots[i]) accumulate(cot[roots[i].get()], cotangents[i]);
  std::unordered_set<Node*> keep;
  for (const auto& w : wanted) keep.insert(w.get());
  const BackwardObserver* observer = t_observer;
  BackwardStep step;

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = *it;
    auto c = cot.find(node);
    if (c == cot.end()) continue;
    Tensor g = c->second;
    if (observer) {
      step.node = node;
      step.cotangent = g;
      step.to_parents.assign(node->is_leaf ? 0 : node->parents.size(), Tensor());
    }
    if (node->is_leaf) {
      if (observer) (*observer)(step);
      if (auto leaf = node->leaf_tensor.lock()) {
        Tensor old(leaf->grad);
        // A fresh tensor, never g itself: g may be the caller's cotangent or be shared with other
        // leaves (add's VJP passes it on unchanged), and optimizers update .grad in place.
        leaf->grad = (old.defined() ? engine_ops::add(old, g) : engine_ops::clone(g)).impl_ptr();
      }
      continue;
    }
    EMBER_CHECK(node->vjp, "backward: the graph through '", node->op,
                "' was already freed by an earlier backward(); compute the forward pass again");
    check_saved_unchanged(*node);
    std::vector<Tensor> gs = node->vjp(g, *node);
    EMBER_CHECK(gs.size() == node->parents.size(), "'", node->op, "': the VJP rule returned ", gs.size(),
                " cotangents for ", node->parents.size(), " inputs");
    for (size_t i = 0; i < node->parents.size(); ++i) {
      Node* p = node->parents[i].get();
      if (!p || !gs[i].defined()) continue;
      EMBER_CHECK(gs[i].shape() == p->shape, "'", node->op, "': the VJP rule returned shape ", to_string(gs[i].shape()),
                  " for input ", i, " of shape ", to_string(p->shape));
      accumulate(cot[p], gs[i]);
      if (observer) step.to_parents[i] = gs[i];
    }
    if (observer) (*observer)(step);
    if (!keep.count(node)) cot.erase(c);  // release cotangents as soon as they are consumed
    if (free_graph) node->free_saved();
  }
  std::vector<Tensor> out;
  for (const auto& w : wanted) {
    auto c = cot.find(w.get());
    out.push_back(c == cot.end() ? Tensor() : c->second);
  }
  return out;
}

std::shared_ptr<Node> leaf_node(const Tensor& x, int index, bool forward_mode) {
  auto node = std::make_shared<Node>();
  node->op = "input";
  node->is_leaf = true;
  node->leaf_index = index;
  node->forward_mode = forward_mode;
  node->shape = x.shape();
  node->dtype = x.dtype();
  node->device = x.device();
  detail::report_recorded(*node, x);
  return node;
}

void check_cotangent(const Tensor& g, const Shape& shape, DType dtype, size_t i, const char* who) {
  EMBER_CHECK(g.defined(), who, ": cotangent ", i, " is undefined");
  EMBER_CHECK(g.shape() == shape, who, ": cotangent ", i, " has shape ", to_string(g.shape()),
              " but the output has shape ", to_string(shape));
  EMBER_CHECK(g.dtype() == dtype, who, ": cotangent ", i, " is ", g.dtype(), " but the output is ", dtype);
}
}  // namespace

std::vector<Tensor> backward_pass(const std::vector<std::shared_ptr<Node>>& roots, const std::vector<Tensor>& cotangents,
                                  const std::vector<std::shared_ptr<Node>>& wanted) {
  return run_backward(roots, cotangents, wanted, false);
}

void eager_backward(const Tensor& y, const Tensor& cotangent) {
  std::shared_ptr<TensorImpl> p = y.impl_ptr();
  while (p && p->node && p->trace != kEagerTrace) p = p->inner;
  EMBER_CHECK(p && p->node, "backward: this tensor does not depend on any tensor with requires_grad_() set");
  Tensor g = cotangent;
  if (!g.defined()) {
    EMBER_CHECK(y.numel() == 1, "backward: the output has shape ", to_string(y.shape()),
                "; pass a cotangent of that shape, or reduce the output to one element first");
    g = ones(y.shape(), y.dtype(), y.device());
  }
  check_cotangent(g, y.shape(), y.dtype(), 0, "backward");
  run_backward({p->node}, {g}, {}, true);
}

}  // namespace autograd

std::vector<Tensor> VjpFunction::operator()(const std::vector<Tensor>& cotangents) const {
  EMBER_CHECK(cotangents.size() == out_shapes_.size(), "vjp: expected ", out_shapes_.size(),
              " cotangents (one per output), got ", cotangents.size());
  std::vector<std::shared_ptr<autograd::Node>> roots;
  std::vector<Tensor> gs;
  for (size_t i = 0; i < cotangents.size(); ++i) {
    autograd::check_cotangent(cotangents[i], out_shapes_[i], out_dtypes_[i], i, "vjp");
    if (outputs_[i]) {
      roots.push_back(outputs_[i]);
      gs.push_back(cotangents[i]);
    }
  }
  std::vector<Tensor> out = autograd::run_backward(roots, gs, leaves_, false);
  for (size_t i = 0; i < out.size(); ++i)
    if (!out[i].defined()) out[i] = zeros_like(inputs_[i]);
  return out;
}

std::pair<std::vector<Tensor>, VjpFunction> make_vjp(const FnNM& f, const std::vector<Tensor>& xs) {
  int t = autograd::new_trace_id();
  VjpFunction vjp;
  std::vector<Tensor> boxed;
  for (size_t i = 0; i < xs.size(); ++i) {
    EMBER_CHECK(xs[i].defined(), "make_vjp: input ", i, " is undefined");
    auto node = autograd::leaf_node(xs[i], int(i), false);
    vjp.leaves_.push_back(node);
    boxed.push_back(autograd::box(xs[i], t, node));
  }
  vjp.inputs_ = xs;
  std::vector<Tensor> ys = f(boxed);
  for (Tensor& y : ys) {
    EMBER_CHECK(y.defined(), "make_vjp: the function returned an undefined tensor");
    bool traced = y.impl()->node && y.impl()->trace == t;
    vjp.outputs_.push_back(traced ? y.impl()->node : nullptr);
    vjp.out_shapes_.push_back(y.shape());
    vjp.out_dtypes_.push_back(y.dtype());
    y = autograd::unbox(y, t);
  }
  return {ys, vjp};
}

std::pair<Tensor, Fn1> make_vjp(const Fn1& f, const Tensor& x) {
  auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0])}; }, {x});
  return {ys[0], [vjp = vjp](const Tensor& g) { return vjp({g})[0]; }};
}

namespace {
Tensor seed_cotangent(const Tensor& y) {
  EMBER_CHECK(y.numel() == 1, "grad: the function must return a one-element tensor, got shape ",
              to_string(y.shape()), " (use make_vjp for non-scalar outputs)");
  return ones(y.shape(), y.dtype(), y.device());
}
}  // namespace

Fn1 grad(const Fn1& f) {
  return [f](const Tensor& x) {
    auto [y, vjp] = make_vjp(f, x);
    return vjp(seed_cotangent(y));
  };
}

FnN grad(const FnN& f, int argnum) {
  return [f, argnum](const std::vector<Tensor>& xs) {
    EMBER_CHECK(argnum >= 0 && size_t(argnum) < xs.size(), "grad: argnum ", argnum, " is out of range for ",
                xs.size(), " inputs");
    auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; }, xs);
    return vjp({seed_cotangent(ys[0])})[argnum];
  };
}

std::function<std::pair<Tensor, Tensor>(const Tensor&)> value_and_grad(const Fn1& f) {
  return [f](const Tensor& x) {
    auto [y, vjp] = make_vjp(f, x);
    return std::make_pair(y, vjp(seed_cotangent(y)));
  };
}

std::function<std::pair<Tensor, std::vector<Tensor>>(const std::vector<Tensor>&)> value_and_grads(const FnN& f) {
  return [f](const std::vector<Tensor>& xs) {
    auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; }, xs);
    return std::make_pair(ys[0], vjp({seed_cotangent(ys[0])}));
  };
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> make_jvp(const FnNM& f, const std::vector<Tensor>& xs,
                                                             const std::vector<Tensor>& vs) {
  EMBER_CHECK(xs.size() == vs.size(), "make_jvp: got ", xs.size(), " inputs but ", vs.size(), " tangents");
  int t = autograd::new_trace_id();
  std::vector<Tensor> boxed;
  for (size_t i = 0; i < xs.size(); ++i) {
    EMBER_CHECK(xs[i].defined() && vs[i].defined(), "make_jvp: input or tangent ", i, " is undefined");
    EMBER_CHECK(vs[i].shape() == xs[i].shape() && vs[i].dtype() == xs[i].dtype(), "make_jvp: tangent ", i,
                " is ", vs[i].dtype(), to_string(vs[i].shape()), " but its input is ", xs[i].dtype(),
                to_string(xs[i].shape()));
    auto node = autograd::leaf_node(xs[i], int(i), true);
    node->tangent = vs[i];
    boxed.push_back(autograd::box(xs[i], t, node));
  }
  std::vector<Tensor> ys = f(boxed), ts;
  for (Tensor& y : ys) {
    EMBER_CHECK(y.defined(), "make_jvp: the function returned an undefined tensor");
    bool traced = y.impl()->node && y.impl()->trace == t;
    Tensor tan = traced ? y.impl()->node->tangent : Tensor();
    y = autograd::unbox(y, t);
    ts.push_back(tan.defined() ? tan : zeros_like(y));
  }
  return {ys, ts};
}

std::pair<Tensor, Tensor> make_jvp(const Fn1& f, const Tensor& x, const Tensor& v) {
  auto [ys, ts] = make_jvp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0])}; }, {x}, {v});
  return {ys[0], ts[0]};
}

}  // namespace ember

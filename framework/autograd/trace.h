// Tracing, as in HIPS Autograd: each make_vjp / make_jvp call opens a trace with a fresh id and
// boxes its inputs. A primitive that sees boxed inputs unboxes those of the newest (highest) trace,
// calls itself on the unboxed values (which records into older traces, giving higher-order
// derivatives), and boxes its result with a Node of the newest trace. Trace 1 is the always-open
// eager trace that requires_grad_ leaves live in.
#pragma once
#include <initializer_list>
#include <optional>
#include <vector>

#include "framework/autograd/node.h"
#include "framework/tensor.h"

namespace ember::autograd {

constexpr int kEagerTrace = 1;
using Args = std::vector<Tensor>;

int new_trace_id();
// The box of `value` at trace `trace` carrying `node`; shares value's storage and view metadata.
Tensor box(const Tensor& value, int trace, std::shared_ptr<Node> node);
// The value of `t` one level below trace `trace` when `t` is boxed there, else `t` itself.
Tensor unbox(const Tensor& t, int trace);
Tensor unbox_all(const Tensor& t);  // the raw tensor under every box

// No-grad scope: ops compute on raw values and record nothing.
bool grad_enabled();
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// True when an op applied to these tensors now would be recorded (grad is on and one of them is
// boxed by a trace). Backward rules use it to pick a fused kernel when their own result will not
// be differentiated again, and their Ember-op form (which can be) otherwise.
inline bool any_traced(std::initializer_list<const Tensor*> ts) {
  if (!grad_enabled()) return false;
  for (const Tensor* t : ts)
    if (t->defined() && t->is_traced()) return true;
  return false;
}

// While on, every node keeps its unboxed value (autodiff_trace prints them). Off by default
// because it keeps every intermediate alive.
void set_record_values(bool on);
bool record_values();

namespace detail {
int top_trace(const Args& args);  // highest trace id among boxed args, 0 if none
std::shared_ptr<Node> make_node(const char* op, const Args& args, int trace, const Tensor& ans);
}  // namespace detail

// Records one primitive application. Returns nullopt when no argument is traced, so the op runs its
// kernel directly. Otherwise:
//   fwd(unboxed_args) -> Tensor           re-invokes the op one trace level down
//   make_vjp(ans, unboxed_args) -> VjpFn   captures only what the backward needs
//   jvp(tangents, ans, unboxed_args)       the output tangent; tangents[i] undefined when input i has none
template <class Fwd, class MakeVjp, class Jvp>
std::optional<Tensor> record(const char* op, const Args& args, Fwd&& fwd, MakeVjp&& make_vjp, Jvp&& jvp) {
  int t = detail::top_trace(args);
  if (t == 0) return std::nullopt;
  Args inner(args.size());
  if (!grad_enabled()) {
    for (size_t i = 0; i < args.size(); ++i) inner[i] = unbox_all(args[i]);
    return fwd(inner);
  }
  for (size_t i = 0; i < args.size(); ++i) inner[i] = unbox(args[i], t);
  Tensor ans = fwd(inner);
  auto node = detail::make_node(op, args, t, ans);
  if (node->forward_mode) {
    Args tangents(args.size());
    for (size_t i = 0; i < args.size(); ++i)
      if (node->parents[i]) tangents[i] = node->parents[i]->tangent;
    node->tangent = jvp(tangents, ans, inner);
  } else {
    node->vjp = make_vjp(ans, inner);
  }
  return box(ans, t, std::move(node));
}

}  // namespace ember::autograd

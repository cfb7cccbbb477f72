// Tracing, as in HIPS Autograd: each make_vjp / make_jvp call opens a trace with a fresh id and
// boxes its inputs. A primitive (primitive.h) that sees boxed inputs unboxes those of the newest
// (highest) trace, applies itself to the unboxed values (which records into older traces, giving
// higher-order derivatives), and boxes its result with a Node of the newest trace. Trace 1 is the
// always-open eager trace that requires_grad_ leaves live in.
#pragma once
#include <functional>
#include <initializer_list>
#include <vector>

#include "framework/core/autograd/node.h"
#include "framework/core/tensor.h"

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
// boxed by a trace). A backward that has a fused kernel takes it only when this is false for what
// it reads, i.e. when its own result will not be differentiated again.
inline bool any_traced(std::initializer_list<const Tensor*> ts) {
  if (!grad_enabled()) return false;
  for (const Tensor* t : ts)
    if (t->defined() && t->is_traced()) return true;
  return false;
}

// While alive, every node recorded on this thread (make_vjp/make_jvp inputs included) is reported
// with its unboxed value, in the order the program made them. A study tool (examples/autodiff
// reads evaluation traces with it); recording without one pays one test.
using RecordObserver = std::function<void(const Node& node, const Tensor& value)>;
class ObserveRecording {
 public:
  explicit ObserveRecording(RecordObserver observer);
  ~ObserveRecording();
  ObserveRecording(const ObserveRecording&) = delete;
  ObserveRecording& operator=(const ObserveRecording&) = delete;

 private:
  RecordObserver observer_;
  const RecordObserver* prev_;
};

namespace detail {
int top_trace(const Args& args);  // highest trace id among boxed args, 0 if none
std::shared_ptr<Node> make_node(const char* op, const Args& args, int trace, const Tensor& ans);
void report_recorded(const Node& node, const Tensor& value);  // to the ObserveRecording, if any
}  // namespace detail

}  // namespace ember::autograd

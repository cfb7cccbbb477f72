#include "framework/core/autograd/trace.h"

#include <atomic>

namespace ember::autograd {
namespace {
std::atomic<int> g_next_trace{kEagerTrace + 1};
thread_local bool t_grad_enabled = true;
thread_local const RecordObserver* t_record_observer = nullptr;
}  // namespace

int new_trace_id() { return g_next_trace++; }

bool grad_enabled() { return t_grad_enabled; }
NoGradGuard::NoGradGuard() : prev_(t_grad_enabled) { t_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { t_grad_enabled = prev_; }

ObserveRecording::ObserveRecording(RecordObserver observer) : observer_(std::move(observer)), prev_(t_record_observer) {
  t_record_observer = &observer_;
}
ObserveRecording::~ObserveRecording() { t_record_observer = prev_; }

Tensor box(const Tensor& value, int trace, std::shared_ptr<Node> node) {
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl* v = value.impl();
  impl->storage = v->storage;
  impl->shape = v->shape;
  impl->strides = v->strides;
  impl->offset = v->offset;
  impl->dtype = v->dtype;
  impl->inner = value.impl_ptr();
  impl->node = std::move(node);
  impl->trace = trace;
  return Tensor(std::move(impl));
}

Tensor unbox(const Tensor& t, int trace) {
  if (t.defined() && t.impl()->node && t.impl()->trace == trace) return Tensor(t.impl()->inner);
  return t;
}

Tensor unbox_all(const Tensor& t) {
  if (!t.defined()) return t;
  std::shared_ptr<TensorImpl> p = t.impl_ptr();
  while (p->node) p = p->inner;
  return Tensor(p);
}

namespace detail {

int top_trace(const Args& args) {
  int t = 0;
  for (const Tensor& a : args)
    if (a.defined() && a.impl()->node && a.impl()->trace > t) t = a.impl()->trace;
  return t;
}

std::shared_ptr<Node> make_node(const char* op, const Args& args, int trace, const Tensor& ans) {
  auto node = std::make_shared<Node>();
  node->op = op;
  node->parents.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor& a = args[i];
    if (a.defined() && a.impl()->node && a.impl()->trace == trace) {
      node->parents[i] = a.impl()->node;
      node->forward_mode = a.impl()->node->forward_mode;
    }
  }
  node->shape = ans.shape();
  node->dtype = ans.dtype();
  node->device = ans.device();
  node->recorded_at = write_clock();
  if (t_record_observer) (*t_record_observer)(*node, unbox_all(ans));
  return node;
}

void report_recorded(const Node& node, const Tensor& value) {
  if (t_record_observer) (*t_record_observer)(node, unbox_all(value));
}

}  // namespace detail
}  // namespace ember::autograd

namespace ember::autograd {
Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending = std::move(parents);
  while (!pending.empty()) {
    std::shared_ptr<Node> p = std::move(pending.back());
    pending.pop_back();
    // Last owner: take its parents before it dies, so its own destructor finds nothing to release.
    if (p && p.use_count() == 1)
      for (auto& q : p->parents) pending.push_back(std::move(q));
  }
}
}  // namespace ember::autograd

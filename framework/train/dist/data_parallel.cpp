#include "framework/train/dist/data_parallel.h"

#include <chrono>

#include "framework/core/autograd/autograd.h"
#include "framework/core/autograd/node.h"

namespace ember::dist {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The layout was compared across ranks once (broadcast_parameters); the per-step collectives skip it.
class NoVerify {
 public:
  explicit NoVerify(Communicator& c) : c_(c), was_(c.verify()) { c.set_verify(false); }
  ~NoVerify() { c_.set_verify(was_); }

 private:
  Communicator& c_;
  bool was_;
};

const autograd::Node* leaf_node_of(const Tensor& p) {
  const autograd::Node* n = nullptr;
  for (TensorImpl* q = p.impl(); q && q->node; q = q->inner.get())
    if (q->trace == autograd::kEagerTrace && q->node->is_leaf) n = q->node.get();
  return n;
}

// Sets a leaf's .grad() to g (Tensor has no setter: optimizers only read it).
void set_grad(const Tensor& p, const Tensor& g) {
  for (TensorImpl* q = p.impl(); q && q->node; q = q->inner.get())
    if (q->trace == autograd::kEagerTrace) {
      q->grad = g.impl_ptr();
      return;
    }
}
}  // namespace

DataParallel::DataParallel(nn::Module& model, Communicator& comm, DataParallelOptions options)
    : DataParallel(model.parameters(), comm, options) {}

DataParallel::DataParallel(std::vector<Tensor> params, Communicator& comm, DataParallelOptions options)
    : params_(std::move(params)), comm_(comm), opt_(options) {
  EMBER_CHECK(!params_.empty(), "DataParallel: the parameter list is empty");
  EMBER_CHECK(opt_.bucket_bytes > 0, "DataParallel: bucket_bytes must be positive, got ", opt_.bucket_bytes);
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    EMBER_CHECK(p.defined() && p.requires_grad(), "DataParallel: parameter ", i,
                " does not require gradients (expected Module parameters, or leaves with requires_grad_())");
    const autograd::Node* n = leaf_node_of(p);
    EMBER_CHECK(n, "DataParallel: parameter ", i, " is computed from other tensors, not a leaf");
    EMBER_CHECK(node_index_.emplace(n, i).second, "DataParallel: parameter ", i, " is listed twice");
    EMBER_CHECK(p.detach().is_contiguous(), "DataParallel: parameter ", i, " is not contiguous");
  }
  build_buckets(opt_.bucket_bytes);
  broadcast_parameters(0);
}

void DataParallel::build_buckets(int64_t bucket_bytes) {
  slots_.assign(params_.size(), Slot{});
  std::vector<std::vector<size_t>> groups;
  int64_t bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor& p = params_[k];
    const int64_t b = p.numel() * int64_t(itemsize(p.dtype()));
    bool same_kind = !groups.empty() && params_[groups.back().front()].dtype() == p.dtype() &&
                     params_[groups.back().front()].device() == p.device();
    if (!same_kind || bytes + b > bucket_bytes) {
      if (!same_kind || bytes > 0) groups.emplace_back(), bytes = 0;
    }
    groups.back().push_back(k);
    bytes += b;
  }
  for (auto& g : groups) {
    Bucket bucket;
    int64_t n = 0;
    for (size_t k : g) {
      slots_[k] = Slot{int64_t(buckets_.size()), n, false};
      n += params_[k].numel();
    }
    bucket.flat = zeros({n}, params_[g.front()].dtype(), params_[g.front()].device());
    bucket.params = std::move(g);
    buckets_.push_back(std::move(bucket));
  }
}

void DataParallel::broadcast_parameters(int root) {
  autograd::NoGradGuard no_grad;
  // Verified: a rank whose model differs in shape or dtype is an error on every rank here.
  for (const Tensor& p : params_) comm_.broadcast(p.detach(), root);
}

void DataParallel::pack(size_t i, const Tensor& grad) {
  Slot& s = slots_[i];
  Bucket& b = buckets_[size_t(s.bucket)];
  Tensor dst = b.flat.narrow(0, s.offset, params_[i].numel());
  if (grad.defined()) {
    EMBER_CHECK(grad.shape() == params_[i].shape(), "DataParallel: the gradient of parameter ", i, " has shape ",
                to_string(grad.shape()), ", expected ", to_string(params_[i].shape()));
    dst.copy_(grad.detach().reshape({params_[i].numel()}));
  } else {
    dst.zero_();
  }
  s.arrived = true;
  ++b.arrived;
}

void DataParallel::start_ready_buckets() {
  NoVerify quiet(comm_);
  while (next_start_ < buckets_.size() && buckets_[next_start_].arrived == int64_t(buckets_[next_start_].params.size())) {
    Bucket& b = buckets_[next_start_++];
    b.work = comm_.all_reduce_async(b.flat, ReduceOp::Mean);
    stats_.bytes += b.flat.numel() * int64_t(itemsize(b.flat.dtype()));
  }
  // MPI moves non-blocking collectives forward only inside MPI calls.
  for (size_t k = 0; k < next_start_; ++k)
    if (buckets_[k].work) buckets_[k].work->test();
}

void DataParallel::backward(const Tensor& loss) {
  if (!opt_.overlap || comm_.world_size() == 1) {
    loss.backward();
    all_reduce_gradients();
    return;
  }
  double inside = 0;
  // The engine reports each leaf once per pass, with the cotangent it is about to add to .grad():
  // the gradient it will hold is that plus what .grad() holds now.
  autograd::ObserveBackward watch([&](const autograd::BackwardStep& step) {
    if (!step.node->is_leaf) return;
    auto it = node_index_.find(step.node);
    if (it == node_index_.end()) return;
    const auto t0 = Clock::now();
    autograd::NoGradGuard no_grad;
    const Tensor old = params_[it->second].grad();
    pack(it->second, old.defined() ? autograd::add_values(old.detach(), step.cotangent) : step.cotangent);
    const size_t before = next_start_;
    start_ready_buckets();
    stats_.buckets_started_early += int64_t(next_start_ - before);
    inside += since(t0);
  });
  try {
    loss.backward();
  } catch (...) {
    // Let the started all-reduces finish (their buffers are ours), then forget the half-done step
    // so that the next backward starts clean.
    for (Bucket& b : buckets_) {
      if (b.work) try { b.work->wait(); } catch (...) {}
      b.work.reset();
      b.arrived = 0;
      for (size_t i : b.params) slots_[i].arrived = false;
    }
    next_start_ = 0;
    throw;
  }
  stats_.sync_seconds += inside;
  finish();
}

void DataParallel::all_reduce_gradients() { finish(); }

void DataParallel::finish() {
  const auto t0 = Clock::now();
  autograd::NoGradGuard no_grad;
  if (comm_.world_size() > 1) {
    // What backward did not report (no overlap, or no gradient on this rank) is packed now, in
    // bucket order.
    for (Bucket& b : buckets_)
      for (size_t i : b.params)
        if (!slots_[i].arrived) pack(i, params_[i].grad());
    start_ready_buckets();
    const auto w0 = Clock::now();
    for (Bucket& b : buckets_) b.work->wait();
    stats_.wait_seconds += since(w0);
    for (Bucket& b : buckets_) {
      for (size_t i : b.params) {
        const Tensor& p = params_[i];
        Tensor mean = b.flat.narrow(0, slots_[i].offset, p.numel()).view(p.shape());
        Tensor g = p.grad();
        if (g.defined() && g.is_contiguous()) g.copy_(mean);
        else set_grad(p, mean.clone());
      }
    }
  }
  for (Bucket& b : buckets_) {
    b.work.reset();
    b.arrived = 0;
    for (size_t i : b.params) slots_[i].arrived = false;
  }
  next_start_ = 0;
  ++stats_.steps;
  stats_.sync_seconds += since(t0);
}

}  // namespace ember::dist

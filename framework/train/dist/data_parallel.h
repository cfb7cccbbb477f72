// DataParallel: the same model on every rank, each rank a slice of the batch. It broadcasts the
// parameters from rank 0 when made, and after each backward pass leaves every rank holding the
// mean over ranks of the gradients, so that identical optimizers take identical steps.
//
// Gradients are averaged in buckets of about `bucket_bytes`: parameters are packed into flat
// buffers in reverse registration order (the order backward produces their gradients), and with
// `overlap` a bucket's all-reduce starts as soon as the backward pass has produced all of its
// gradients, while backward goes on with the layers below. Buckets start in the same order on
// every rank (a bucket waits for the ones before it), as collectives must.
//
//   dist::DataParallel ddp(*model, comm);
//   for (...) { opt.zero_grad(); ddp.backward(loss_of(model, my_shard)); opt.step(); }
//
// For gradient accumulation over micro-batches, call plain loss.backward() on all but the last
// and ddp.backward() on the last: the average is taken once, of the accumulated gradients.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "framework/train/dist/communicator.h"
#include "framework/train/nn/module.h"

namespace ember::dist {

struct DataParallelOptions {
  int64_t bucket_bytes = int64_t(1) << 20;
  bool overlap = true;  // start buckets during backward; false: all after it
};

// Where the time of the gradient averaging went, summed over steps.
struct DataParallelStats {
  int64_t steps = 0;
  int64_t bytes = 0;                  // gradient bytes averaged, per rank
  int64_t buckets_started_early = 0;  // buckets whose all-reduce began during backward
  double sync_seconds = 0;            // in DataParallel: packing, starting, waiting, unpacking
  double wait_seconds = 0;            // of which waiting for all-reduces after backward
};

class DataParallel {
 public:
  DataParallel(nn::Module& model, Communicator& comm, DataParallelOptions options = {});
  // The parameters as given to the optimizer (leaves with requires_grad_).
  DataParallel(std::vector<Tensor> params, Communicator& comm, DataParallelOptions options = {});

  // Rank `root`'s parameter values into every rank's parameters (the constructor does it from 0).
  void broadcast_parameters(int root = 0);
  // loss.backward(), then every parameter's .grad() is the mean over ranks. A parameter that got
  // no gradient on this rank takes part with zeros and ends with the mean as its gradient.
  void backward(const Tensor& loss);
  // The same averaging after a plain loss.backward() (no overlap).
  void all_reduce_gradients();

  int64_t num_buckets() const { return int64_t(buckets_.size()); }
  int64_t bucket_of(size_t param) const { return slots_.at(param).bucket; }
  const DataParallelStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }
  Communicator& communicator() { return comm_; }

 private:
  struct Slot {  // one parameter's place in a bucket
    int64_t bucket = 0, offset = 0;
    bool arrived = false;  // its gradient is in the bucket for this step
  };
  struct Bucket {
    Tensor flat;                 // the gradients, packed
    std::vector<size_t> params;  // in packing order
    int64_t arrived = 0;
    std::unique_ptr<Work> work;
  };
  void build_buckets(int64_t bucket_bytes);
  void pack(size_t param, const Tensor& grad);  // grad undefined: zeros
  void start_ready_buckets();
  void finish();

  std::vector<Tensor> params_;
  Communicator& comm_;
  DataParallelOptions opt_;
  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;
  std::unordered_map<const void*, size_t> node_index_;  // parameters' autograd leaf nodes, to spot them in backward
  size_t next_start_ = 0;
  DataParallelStats stats_;
};

}  // namespace ember::dist

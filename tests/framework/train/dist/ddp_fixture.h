// The data-parallel equivalence check shared by the world-size-1 tests (ember_tests) and the
// 2-rank tests (ember_mpi_tests): a small MLP trained on random batches, once by one process on
// each whole batch and once data-parallel with each rank on its slice.
#pragma once
#include <vector>

#include "ember.h"

namespace ember::testing::ddp {

constexpr int64_t kIn = 9, kHidden = 17, kClasses = 5, kBatch = 12;

inline data::Batch global_batch(int64_t step) {
  Generator g(1000 + uint64_t(step));
  Tensor x = randn({kBatch, kIn}, DType::Float32, &g);
  Tensor y = randint({kBatch}, 0, kClasses, &g);
  return {x, y};
}

// This rank's contiguous slice of the global batch (the ShardedSampler's split).
inline data::Batch shard(const data::Batch& b, int rank, int world) {
  const int64_t lo = kBatch * rank / world, hi = kBatch * (rank + 1) / world;
  return {b.inputs.narrow(0, lo, hi - lo).contiguous(), b.targets.narrow(0, lo, hi - lo).contiguous()};
}

// Parameters after `steps` SGD-with-momentum steps. comm == nullptr: one process, whole batches.
// `init_seed` differs per rank in the data-parallel run, so the broadcast from rank 0 matters.
inline std::vector<Tensor> train(int64_t steps, dist::Communicator* comm, uint64_t init_seed,
                                 dist::DataParallelOptions o = {}) {
  nn::MLPOptions mo;
  mo.activation = nn::Activation::Tanh;
  mo.seed = init_seed;
  auto model = nn::make_mlp({kIn, kHidden, kHidden, kClasses}, mo);
  std::unique_ptr<dist::DataParallel> ddp;
  if (comm) ddp = std::make_unique<dist::DataParallel>(*model, *comm, o);
  optim::SGD opt(model->parameters(), {0.05, 0.9, false, 1e-4});
  for (int64_t s = 0; s < steps; ++s) {
    data::Batch b = global_batch(s);
    if (comm) b = shard(b, comm->rank(), comm->world_size());
    opt.zero_grad();
    Tensor loss = cross_entropy((*model)(b.inputs), b.targets);
    if (ddp) ddp->backward(loss);
    else loss.backward();
    opt.step();
  }
  std::vector<Tensor> out;
  for (const Tensor& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

}  // namespace ember::testing::ddp

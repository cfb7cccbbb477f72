// The CUDA kernels of softmax, log_softmax, logsumexp, layer_norm, cross_entropy, embedding,
// dropout, gather / scatter_add / one_hot / nonzero and the losses built on them against the CPU kernels
// (themselves checked against float64 references in their own tests), forward and backward, and
// their index checks. Skipped without a GPU (OpTable.CudaMatchesCpu covers every primitive's
// samples as well).
#include "test_util.h"
#include "cuda_test_util.h"

#include "ops/dropout/dropout.h"
#include "ops/embedding/embedding.h"
#include "ops/loss/cross_entropy.h"
#include "ops/loss/losses.h"
#include "ops/norm/layer_norm.h"
#include "ops/pool/pool.h"
#include "ops/select/indexing.h"
#include "ops/softmax/softmax.h"

using namespace ember;
using namespace ember::testing;

namespace {
Tensor gpu(const Tensor& t) { return t.to(Device::CUDA); }
Tensor cpu(const Tensor& t) { return t.to(Device::CPU); }
}  // namespace

TEST(CudaNnOps, SoftmaxFamilyMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  for (DType dt : {DType::Float32, DType::Float64}) {
    double tol = dt == DType::Float32 ? 1e-6 : 1e-13;
    for (const Tensor& x64 : {random({4, 7, 33}, 1), random({33, 7, 4}, 2).permute({2, 1, 0}), random({3, 1000}, 3) * 30.0}) {
      Tensor x = x64.to(dt);
      for (int64_t d = 0; d < x.dim(); ++d) {
        EXPECT_TRUE(all_close(cpu(softmax(gpu(x), d)), softmax(x, d), tol, tol)) << dt << " dim " << d;
        EXPECT_TRUE(all_close(cpu(log_softmax(gpu(x), d)), log_softmax(x, d), tol, tol)) << dt << " dim " << d;
        EXPECT_TRUE(all_close(cpu(logsumexp(gpu(x), d)), logsumexp(x, d), tol, tol)) << dt << " dim " << d;
        EXPECT_TRUE(all_close(cpu(logsumexp(gpu(x), d, true)), logsumexp(x, d, true), tol, tol));
      }
    }
  }
  Tensor inf_row = from_vector(std::vector<double>{-INFINITY, 0.0, -INFINITY, 1.0}, {2, 2});  // -inf terms vanish
  EXPECT_TRUE(all_close(cpu(softmax(gpu(inf_row), 1)), softmax(inf_row, 1), 1e-15, 1e-15));
  auto f = [](const Tensor& x) { return sum(softmax(x, 1) * log_softmax(x, 0)); };
  Tensor x = random({5, 6}, 4);
  EXPECT_TRUE(all_close(cpu(grad(f)(gpu(x))), grad(f)(x), 1e-12, 1e-10));
}

TEST(CudaNnOps, LayerNormMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  for (DType dt : {DType::Float32, DType::Float64}) {
    double tol = dt == DType::Float32 ? 1e-5 : 1e-12;
    Tensor x = (random({6, 5, 300}, 5) + 1000.0).to(dt);  // a large mean: no cancellation allowed
    Tensor w = random({300}, 6).to(dt), b = random({300}, 7).to(dt);
    EXPECT_TRUE(all_close(cpu(layer_norm(gpu(x), gpu(w), gpu(b))), layer_norm(x, w, b), tol, tol));
    EXPECT_TRUE(all_close(cpu(layer_norm(gpu(x), Tensor(), Tensor(), 1e-3)), layer_norm(x, Tensor(), Tensor(), 1e-3), tol, tol));
    Tensor xt = random({300, 4}, 8).to(dt).t();  // rows strided in memory
    EXPECT_TRUE(all_close(cpu(layer_norm(gpu(xt), gpu(w), Tensor())), layer_norm(xt, w, Tensor()), tol, tol));
  }
  auto f = [](const std::vector<Tensor>& v) { return sum(square(layer_norm(v[0], v[1], v[2])) * v[0]); };
  std::vector<Tensor> xs = {random({4, 9}, 9), random({9}, 10), random({9}, 11)}, xg;
  for (auto& t : xs) xg.push_back(gpu(t));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(all_close(cpu(grad(f, i)(xg)), grad(f, i)(xs), 1e-11, 1e-9)) << "input " << i;
}

TEST(CudaNnOps, CrossEntropyMatchesCpuAndChecksTargets) {
  EMBER_SKIP_WITHOUT_GPU();
  for (DType dt : {DType::Float32, DType::Float64}) {
    double tol = dt == DType::Float32 ? 1e-6 : 1e-13;
    Tensor logits = (random({2, 37, 11}, 12) * 5.0).to(dt);
    Tensor targets = randint({2, 37}, 0, 11);
    EXPECT_TRUE(all_close(cpu(cross_entropy(gpu(logits), gpu(targets))), cross_entropy(logits, targets), tol, tol));
  }
  Tensor logits = random({8, 5}, 13), targets = randint({8}, 0, 5);
  auto f = [&](const Tensor& l) { return cross_entropy(l, l.device() == Device::CPU ? targets : gpu(targets)); };
  EXPECT_TRUE(all_close(cpu(grad(f)(gpu(logits))), grad(f)(logits), 1e-13, 1e-11));
  Tensor bad = from_vector(std::vector<int64_t>{0, 1, 5, 2, 0, 1, 2, 3});
  EXPECT_EMBER_ERROR(cross_entropy(gpu(logits), gpu(bad)), "target 5 at flat index 2");
}

TEST(CudaNnOps, EmbeddingMatchesCpuAndChecksIds) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor w = random({10, 6}, 14), ids = from_vector(std::vector<int64_t>{3, 0, 9, 3, 3, 7}, {2, 3});
  EXPECT_TRUE(all_close(cpu(embedding(gpu(w), gpu(ids))), embedding(w, ids), 0, 0));
  EXPECT_TRUE(all_close(cpu(embedding(gpu(w).t().t(), gpu(ids))), embedding(w, ids), 0, 0));
  Tensor wt = random({6, 10}, 15).t();  // a transposed table
  EXPECT_TRUE(all_close(cpu(embedding(gpu(wt), gpu(ids))), embedding(wt, ids), 0, 0));
  auto f = [&](const Tensor& t) { return sum(square(embedding(t, t.device() == Device::CPU ? ids : gpu(ids)))); };
  EXPECT_TRUE(all_close(cpu(grad(f)(gpu(w))), grad(f)(w), 1e-13, 1e-12));  // repeated ids add up
  Tensor bad = from_vector(std::vector<int64_t>{1, -1, 2});
  EXPECT_EMBER_ERROR(embedding(gpu(w), gpu(bad)), "id -1 at flat index 1");
}

TEST(CudaNnOps, DropoutDropsTheSameElementsAsTheCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor x = random({7, 129}, 16);
  Generator g1(99), g2(99);
  Tensor on_cpu = dropout(x, 0.3, true, &g1), on_gpu = dropout(gpu(x), 0.3, true, &g2);
  EXPECT_TRUE(all_close(cpu(on_gpu), on_cpu, 1e-15, 1e-15));
  Generator g3(5), g4(5);
  auto f = [](Generator* g) { return [g](const Tensor& t) { return sum(dropout(t, 0.5, true, g) * t); }; };
  EXPECT_TRUE(all_close(cpu(grad(f(&g3))(gpu(x))), grad(f(&g4))(x), 1e-13, 1e-13));
}

TEST(CudaNnOps, GatherScatterAndOneHotMatchCpuAndCheckIndices) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor x = random({4, 6}, 17), idx = from_vector(std::vector<int64_t>{5, 0, 0, 3, 2, 2, 1, 4}, {4, 2});
  EXPECT_TRUE(all_close(cpu(gather(gpu(x), 1, gpu(idx))), gather(x, 1, idx), 0, 0));
  Tensor src = random({4, 2}, 18);
  Tensor before = gpu(x);
  Tensor added = scatter_add(before, 1, gpu(idx), gpu(src));
  EXPECT_TRUE(all_close(cpu(added), scatter_add(x, 1, idx, src), 1e-15, 1e-15));
  EXPECT_TRUE(all_close(cpu(before), x, 0, 0)) << "scatter_add wrote into its input";
  Tensor ids = from_vector(std::vector<int64_t>{2, 0, 2, 1});
  EXPECT_TRUE(all_close(cpu(one_hot(gpu(ids), 4)), one_hot(ids, 4), 0, 0));
  EXPECT_TRUE(all_close(cpu(one_hot(gpu(ids))), one_hot(ids), 0, 0));
  EXPECT_TRUE(all_close(cpu(index_select(gpu(x), 1, gpu(ids))), index_select(x, 1, ids), 0, 0));
  Tensor bad = from_vector(std::vector<int64_t>{0, 6, 1, 2, 0, 0, 0, 0}, {4, 2});
  EXPECT_EMBER_ERROR(gather(gpu(x), 1, gpu(bad)), "gather: index 6 is out of range for dim 1 of size 6");
  EXPECT_EMBER_ERROR(scatter_add(gpu(x), 1, gpu(bad), gpu(src)), "scatter_add: index 6 is out of range");
  EXPECT_EMBER_ERROR(one_hot(gpu(ids), 2), "one_hot: index 2 is out of range");
  auto f = [&](const Tensor& t) {
    Tensor i = t.device() == Device::CPU ? idx : gpu(idx);
    return sum(square(gather(t, 1, i)) * gather(t, 1, i));
  };
  EXPECT_TRUE(all_close(cpu(grad(f)(gpu(x))), grad(f)(x), 1e-13, 1e-12));  // repeated indices add up
}

TEST(CudaNnOps, NonzeroMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  // Random values with a third of them set to zero, in three dtypes and ranks.
  Tensor x = random({3, 5, 7}, 19);
  Tensor sparse = where(x.gt(0.4), scalar_like(x, 0.0), x);
  for (const Tensor& t : {sparse, cast(sparse, DType::Float32), sparse.ne(0.0), sparse.reshape({105}), sparse.transpose(0, 2)}) {
    Tensor want = nonzero(t), got = nonzero(gpu(t));
    EXPECT_EQ(got.device(), Device::CUDA);
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_TRUE(all_close(cpu(got), want, 0, 0));
  }
  Tensor none = nonzero(gpu(zeros({4, 2})));
  EXPECT_EQ(none.shape(), (Shape{0, 2}));
}

TEST(CudaNnOps, LossesWithTargetsRunOnTheGpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor logits = random({6, 5}, 19), targets = from_vector(std::vector<int64_t>{1, -100, 4, 0, -100, 2});
  CrossEntropyOptions o;  // ignore_index -100 by default
  EXPECT_TRUE(all_close(cpu(cross_entropy(gpu(logits), gpu(targets), o)), cross_entropy(logits, targets, o), 1e-13, 1e-12));
  o.label_smoothing = 0.1;
  EXPECT_TRUE(all_close(cpu(cross_entropy(gpu(logits), gpu(targets), o)), cross_entropy(logits, targets, o), 1e-13, 1e-12));
  Tensor lsm = log_softmax(logits, 1);
  EXPECT_TRUE(all_close(cpu(nll_loss(gpu(lsm), gpu(targets))), nll_loss(lsm, targets), 1e-13, 1e-12));
  EXPECT_EMBER_ERROR(nll_loss(gpu(lsm), gpu(from_vector(std::vector<int64_t>{0, 1, 7, 0, 0, 0}))), "nll_loss: target 7");
  Tensor p = sigmoid(random({3, 4}, 20)), t = sigmoid(random({3, 4}, 21));
  EXPECT_TRUE(all_close(cpu(binary_cross_entropy(gpu(p), gpu(t))), binary_cross_entropy(p, t), 1e-13, 1e-12));
  EXPECT_EMBER_ERROR(binary_cross_entropy(gpu(p + 1.0), gpu(t)), "is not a probability");
}

// Ties and NaNs decide which element takes the gradient: both devices must pick the same one (the
// gradient of the sum counts how many windows picked each element, and stays finite with a NaN).
TEST(CudaNnOps, MaxPoolPicksTheSameElementAsTheCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor ties = randint({2, 3, 7, 6}, 0, 3).to(DType::Float64);
  std::vector<double> v = ties.to_vector<double>();
  v[5] = NAN;
  Tensor with_nan = from_vector(v, ties.shape());
  for (Pair pad : {Pair{0, 0}, Pair{1, 1}}) {
    EXPECT_TRUE(all_close(cpu(max_pool2d(gpu(ties), {3, 2}, {2, 1}, pad, {1, 2})),
                          max_pool2d(ties, {3, 2}, {2, 1}, pad, {1, 2}), 0, 0));
    auto g = [pad](const Tensor& t) { return sum(max_pool2d(t, {2, 2}, {1, 1}, pad)); };
    EXPECT_TRUE(all_close(cpu(grad(g)(gpu(ties))), grad(g)(ties), 0, 0)) << "padding " << pad[0];
    EXPECT_TRUE(all_close(cpu(grad(g)(gpu(with_nan))), grad(g)(with_nan), 0, 0)) << "padding " << pad[0];
  }
}

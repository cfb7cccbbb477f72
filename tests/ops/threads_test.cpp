// The row kernels split rows (or columns) over OpenMP threads only above a grain size that the
// small shapes of the other tests never reach. Here the shapes are big enough to use every
// thread, and results must match the float64 references and be identical for 1 thread and many.
#include <omp.h>

#include <cmath>

#include "ops/dropout/dropout.h"
#include "ops/embedding/embedding.h"
#include "ops/loss/cross_entropy.h"
#include "ops/norm/layer_norm.h"
#include "ops/row_reference.h"
#include "ops/softmax/softmax.h"

using namespace ember;
using namespace ember::testing;

namespace {

// Runs f once with one thread and once with at least two, expecting bit-identical results.
void expect_thread_invariant(const std::function<Tensor()>& f, const char* what) {
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  Tensor one = f();
  omp_set_num_threads(std::max(saved, 2));
  Tensor many = f();
  omp_set_num_threads(saved);
  EXPECT_TRUE(all_close(many, one, 0, 0)) << what;
}

}  // namespace

TEST(RowKernelsThreaded, SoftmaxFamily) {
  Tensor x = random({600, 50}, 700) * 2.0;
  expect_thread_invariant([&] { return softmax(x); }, "softmax");
  expect_thread_invariant([&] { return log_softmax(x.t(), 0); }, "log_softmax over a transposed view");
  expect_thread_invariant([&] { return logsumexp(x.to(DType::Float32), 1); }, "logsumexp float32");
  EXPECT_TRUE(all_close(softmax(x), map_rows(x, 1, 50, [](const std::vector<double>& r) {
                          double m = r[0], s = 0;
                          for (double v : r) m = std::max(m, v);
                          for (double v : r) s += std::exp(v - m);
                          std::vector<double> y;
                          for (double v : r) y.push_back(std::exp(v - m) / s);
                          return y;
                        }),
                        1e-15, 1e-12));
}

TEST(RowKernelsThreaded, LayerNormCrossEntropyEmbeddingDropout) {
  Tensor x = random({400, 64}, 701), w = random({64}, 702), b = random({64}, 703);
  expect_thread_invariant([&] { return layer_norm(x, w, b); }, "layer_norm");
  // Row statistics per thread: compare with the per-row result of a 1-row call.
  Tensor y = layer_norm(x, w, b);
  EXPECT_TRUE(all_close(y.slice(0, 399, 400), layer_norm(x.slice(0, 399, 400), w, b), 0, 0));

  Generator g(704);
  Tensor t = randint({400}, 0, 64, &g);
  expect_thread_invariant([&] { return cross_entropy(x, t); }, "cross_entropy");
  expect_thread_invariant([&] { return grad([&](const Tensor& z) { return cross_entropy(z, t); })(x); },
                          "cross_entropy gradient");

  Tensor table = random({50, 64}, 705);
  Tensor ids = randint({3000}, 0, 50, &g);
  expect_thread_invariant([&] { return embedding(table, ids); }, "embedding");
  Tensor gr = random({3000, 64}, 706);
  expect_thread_invariant([&] { return embedding_backward(gr, ids, 50); }, "embedding_backward");

  Tensor big = random({50000}, 707);
  expect_thread_invariant([&] {
    Generator dg(9);
    return dropout(big, 0.25, true, &dg);
  }, "dropout");
}

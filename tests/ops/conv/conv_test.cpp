// conv2d / conv1d beyond the op table (tests/op_table/specs_conv_pool_norm.cpp covers the
// float64 references, gradcheck, grad of grad and the errors): conv1d, float32 on several
// threads, and the composed gradient of a small network.
#include "ember.h"
#include "framework/core/parallel.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

// y[n, o, l] = b[o] + sum over c, k of w[o, c, k] x[n, g * Cg + c, l * s - p + k * d].
Tensor ref_conv1d(const Tensor& x, const Tensor& w, const Tensor& b, int64_t s, int64_t p, int64_t d, int64_t groups) {
  int64_t n = x.size(0), len = x.size(2), cout = w.size(0), cg = w.size(1), k = w.size(2);
  int64_t ol = (len + 2 * p - d * (k - 1) - 1) / s + 1, mg = cout / groups;
  Tensor y = zeros({n, cout, ol}, DType::Float64);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t l = 0; l < ol; ++l) {
        double acc = b.defined() ? b.at({o}) : 0.0;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t t = 0; t < k; ++t) {
            int64_t at = l * s - p + t * d;
            if (at >= 0 && at < len) acc += w.at({o, c, t}) * x.at({i, (o / mg) * cg + c, at});
          }
        y.set({i, o, l}, acc);
      }
  return y;
}

}  // namespace

TEST(Conv1d, MatchesFloat64ReferenceAndGradcheck) {
  struct C {
    Shape x, w;
    int64_t s, p, d, g;
  };
  uint64_t seed = 10;
  for (C c : {C{{2, 3, 11}, {4, 3, 3}, 1, 0, 1, 1}, C{{1, 4, 13}, {6, 2, 4}, 2, 3, 2, 2}, C{{3, 2, 5}, {2, 2, 1}, 1, 0, 1, 1}}) {
    SCOPED_TRACE(to_string(c.x) + " * " + to_string(c.w));
    Tensor x = random(c.x, seed++), w = random(c.w, seed++), b = random({c.w[0]}, seed++);
    EXPECT_TRUE(all_close(conv1d(x, w, b, c.s, c.p, c.d, c.g), ref_conv1d(x, w, b, c.s, c.p, c.d, c.g), 1e-12, 1e-10));
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& a) { return conv1d(a[0], a[1], a[2], c.s, c.p, c.d, c.g); }, {x, w, b}));
  }
}

TEST(Conv2d, Float32OnUnevenImageChunksMatchesFloat64) {
  // 5 images over 2 threads: chunks of 2 and 3, the weight gradient summed over both.
  set_num_threads(2);
  Conv2dOptions o;
  o.padding = {1, 1};
  Tensor x = random({5, 3, 9, 7}, 1), w = random({8, 3, 3, 3}, 2), b = random({8}, 3), g = random({5, 8, 9, 7}, 4);
  Tensor y64 = conv2d(x, w, b, o), y32 = conv2d(x.to(DType::Float32), w.to(DType::Float32), b.to(DType::Float32), o);
  EXPECT_TRUE(all_close(y32.to(DType::Float64), y64, 1e-4, 1e-4));
  Tensor dw64 = conv2d_weight_grad(x, g, w.shape(), o);
  Tensor dw32 = conv2d_weight_grad(x.to(DType::Float32), g.to(DType::Float32), w.shape(), o);
  EXPECT_TRUE(all_close(dw32.to(DType::Float64), dw64, 1e-3, 1e-4));
  Tensor dx64 = conv2d_input_grad(g, w, x.shape(), o);
  Tensor dx32 = conv2d_input_grad(g.to(DType::Float32), w.to(DType::Float32), x.shape(), o);
  EXPECT_TRUE(all_close(dx32.to(DType::Float64), dx64, 1e-4, 1e-4));
}

TEST(Conv2d, ANetworkOfConvPoolAndBatchNormPassesGradcheck) {
  Conv2dOptions o;
  o.padding = {1, 1};
  Tensor x = random({3, 2, 6, 6}, 5), w1 = random({3, 2, 3, 3}, 6), w2 = random({2, 3, 3, 3}, 7), b2 = random({2}, 8);
  auto f = [&](const std::vector<Tensor>& a) {
    Tensor h = relu(batch_norm(conv2d(a[0], a[1], Tensor(), o), Tensor(), Tensor(), Tensor(), Tensor(), true));
    h = max_pool2d(h, {2, 2});
    return sum(conv2d(h, a[2], a[3], o) * conv2d(h, a[2], a[3], o));
  };
  EXPECT_TRUE(grad_ok(f, {x, w1, w2, b2}));
}

TEST(Conv2d, NonContiguousWeightAndCotangent) {
  Tensor x = random({2, 3, 5, 5}, 9);
  Tensor wt = random({3, 4, 2, 2}, 10).transpose(0, 1);  // (4, 3, 2, 2), not contiguous
  EXPECT_TRUE(all_close(conv2d(x, wt), conv2d(x, wt.contiguous()), 1e-14, 0));
}

// group_norm and rms_norm (compositions, so not in the op table) against loop references, with
// gradcheck, grad of grad and their errors.
#include <cmath>

#include "ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

TEST(GroupNorm, MatchesReferenceAndPassesGradcheck) {
  struct C {
    Shape x;
    int64_t groups;
  };
  uint64_t seed = 40;
  for (C c : {C{{2, 6, 3, 4}, 3}, C{{3, 4, 5}, 1}, C{{2, 4}, 4}, C{{1, 6, 2, 2}, 2}}) {
    SCOPED_TRACE(to_string(c.x) + " groups " + std::to_string(c.groups));
    const int64_t ch = c.x[1], cg = ch / c.groups;
    Tensor x = random(c.x, seed++) * 2.0 + 1.0, w = random({ch}, seed++), b = random({ch}, seed++);
    Tensor xv = x.reshape({c.x[0], ch, -1});
    const int64_t s = xv.size(2);
    Tensor ref = zeros(xv.shape(), DType::Float64);
    for (int64_t n = 0; n < c.x[0]; ++n)
      for (int64_t g = 0; g < c.groups; ++g) {
        double m = 0, var = 0, cnt = double(cg * s);
        for (int64_t k = g * cg; k < (g + 1) * cg; ++k)
          for (int64_t i = 0; i < s; ++i) m += xv.at({n, k, i}) / cnt;
        for (int64_t k = g * cg; k < (g + 1) * cg; ++k)
          for (int64_t i = 0; i < s; ++i) var += (xv.at({n, k, i}) - m) * (xv.at({n, k, i}) - m) / cnt;
        for (int64_t k = g * cg; k < (g + 1) * cg; ++k)
          for (int64_t i = 0; i < s; ++i)
            ref.set({n, k, i}, (xv.at({n, k, i}) - m) / std::sqrt(var + 1e-5) * w.at({k}) + b.at({k}));
      }
    EXPECT_TRUE(all_close(group_norm(x, c.groups, w, b), ref.reshape(c.x), 1e-10, 1e-9));
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& a) { return group_norm(a[0], c.groups, a[1], a[2]); }, {x, w, b}));
  }
  EXPECT_EMBER_ERROR(group_norm(random({2, 6, 3}, 1), 4), "group_norm: 4 groups must be positive and divide the 6 channels");
  EXPECT_EMBER_ERROR(group_norm(random({2, 6, 3}, 1), 3, random({5}, 2)), "group_norm: weight has shape [5]");
  EXPECT_EMBER_ERROR(group_norm(random({6}, 1), 3), "group_norm: expected an input (N, C, ...) of at least 2 dims");
}

TEST(RmsNorm, MatchesReferenceAndPassesGradcheckAndGradOfGrad) {
  Tensor x = random({3, 7}, 50), w = random({7}, 51);
  Tensor ref = zeros({3, 7}, DType::Float64);
  for (int64_t i = 0; i < 3; ++i) {
    double ms = 0;
    for (int64_t k = 0; k < 7; ++k) ms += x.at({i, k}) * x.at({i, k}) / 7.0;
    for (int64_t k = 0; k < 7; ++k) ref.set({i, k}, x.at({i, k}) / std::sqrt(ms + 1e-6) * w.at({k}));
  }
  EXPECT_TRUE(all_close(rms_norm(x, w), ref, 1e-12, 1e-10));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return rms_norm(a[0], a[1]); }, {x, w}));
  auto g = [](const std::vector<Tensor>& a) { return grad([](const Tensor& y) { return sum(rms_norm(y) * exp(rms_norm(y))); })(a[0]); };
  EXPECT_TRUE(grad_ok(g, {x}));
  EXPECT_EMBER_ERROR(rms_norm(x, random({6}, 1)), "rms_norm: weight has shape [6] but the input [3, 7] needs [7]");
  EXPECT_EMBER_ERROR(rms_norm(x, Tensor(), -1.0), "rms_norm: eps must be >= 0");
}

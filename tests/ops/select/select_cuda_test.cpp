// topk, sort and cumsum on the GPU (Thrust) against the CPU results, which the CPU tests check
// against float64 references: the same shapes, ties, NaNs, non-contiguous inputs and k edges;
// gradients computed on the GPU against the CPU's. Skipped visibly without a GPU.
#include <limits>

#include "cuda_test_util.h"
#include "ops/select/select_reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

Tensor gpu(const Tensor& t) { return t.to(Device::CUDA); }
Tensor cpu(const Tensor& t) { return t.to(Device::CPU); }

// Selection does no arithmetic: the GPU must return exactly the CPU's indices and values.
::testing::AssertionResult same_topk(const TopK& g, const TopK& c) {
  if (g.values.device() != Device::CUDA || g.indices.device() != Device::CUDA)
    return ::testing::AssertionFailure() << "results are not on cuda";
  if (cpu(g.indices).to_vector<int64_t>() != c.indices.to_vector<int64_t>())
    return ::testing::AssertionFailure() << "indices differ for shape " << to_string(c.indices.shape());
  std::vector<double> gv = cpu(g.values).to_vector<double>(), cv = c.values.to_vector<double>();
  for (size_t i = 0; i < gv.size(); ++i)
    if (!(gv[i] == cv[i] || (std::isnan(gv[i]) && std::isnan(cv[i]))))
      return ::testing::AssertionFailure() << "value " << i << ": " << gv[i] << " vs " << cv[i];
  if (g.values.shape() != c.values.shape()) return ::testing::AssertionFailure() << "shapes differ";
  return ::testing::AssertionSuccess();
}

std::vector<Tensor> inputs(uint64_t seed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Generator g(seed);
  std::vector<Tensor> xs;
  for (const Shape& s : std::vector<Shape>{{1}, {7}, {33}, {1000}, {3, 7}, {2, 3, 33}, {4, 1000}, {5, 1}})
    xs.push_back(random(s, ++seed));
  xs.push_back(randint({6, 33}, -3, 4, &g).to(DType::Float64));  // ties
  xs.push_back(transposed_random({5, 33}, ++seed));
  xs.push_back(strided_random({3, 7}, ++seed));
  xs.push_back(from_vector(std::vector<double>{1, nan, -0.0, 2, -nan, 0.0, -3}, {1, 7}));
  return xs;
}

}  // namespace

TEST(SelectCuda, TopkAndSortMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  for (DType dt : {DType::Float32, DType::Float64})
    for (const Tensor& x64 : inputs(1400)) {
      Tensor x = x64.to(dt);
      int64_t n = x.size(-1);
      for (int64_t k : {int64_t(0), int64_t(1), n / 2, n})
        for (bool largest : {true, false})
          EXPECT_TRUE(same_topk(topk(gpu(x), k, largest), topk(x, k, largest))) << to_string(x.shape()) << " k " << k;
      for (bool descending : {false, true})
        EXPECT_TRUE(same_topk(sort(gpu(x), descending), sort(x, descending))) << to_string(x.shape());
    }
  EXPECT_EQ(topk(gpu(zeros({0, 5})), 2).values.shape(), (Shape{0, 2}));
}

TEST(SelectCuda, CumsumMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::vector<Tensor> xs = {random({1}, 1500), random({1000}, 1501), random({3, 7}, 1502), random({2, 3, 33}, 1503),
                            transposed_random({5, 7}, 1504), strided_random({3, 7}, 1505), zeros({0, 3}, DType::Float64)};
  for (DType dt : {DType::Float32, DType::Float64})
    for (const Tensor& x64 : xs) {
      Tensor x = x64.to(dt);
      double tol = dt == DType::Float32 ? 1e-6 : 1e-12;
      for (int64_t d = 0; d < x.dim(); ++d) {
        Tensor g = cumsum(gpu(x), d), gr = cumsum_reverse(gpu(x), d);
        EXPECT_EQ(g.device(), Device::CUDA);
        EXPECT_TRUE(all_close(cpu(g), cumsum(x, d), tol, tol)) << to_string(x.shape()) << " dim " << d;
        EXPECT_TRUE(all_close(cpu(gr), cumsum_reverse(x, d), tol, tol)) << to_string(x.shape()) << " dim " << d;
      }
    }
}

TEST(SelectCuda, GradientsMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor x = random({3, 6}, 1600), w = random({3, 2}, 1601), v = random({3, 6}, 1602);
  auto top = [w](const Tensor& t) { return sum(topk(t, 2).values * (t.device() == Device::CUDA ? gpu(w) : w)); };
  EXPECT_TRUE(all_close(cpu(grad(top)(gpu(x))), grad(top)(x), 1e-12, 1e-12));
  auto srt = [v](const Tensor& t) { return sum(sort(t, true).values * (t.device() == Device::CUDA ? gpu(v) : v)); };
  EXPECT_TRUE(all_close(cpu(grad(srt)(gpu(x))), grad(srt)(x), 1e-12, 1e-12));
  auto cs = [v](const Tensor& t) { return sum(square(cumsum(t, 0)) * (t.device() == Device::CUDA ? gpu(v) : v)); };
  EXPECT_TRUE(all_close(cpu(grad(cs)(gpu(x))), grad(cs)(x), 1e-10, 1e-10));
  // Forward mode gathers the tangent at the chosen indices.
  auto [y, jv] = make_jvp([](const Tensor& t) { return topk(t, 3, false).values; }, gpu(x), gpu(v));
  auto [yc, jvc] = make_jvp([](const Tensor& t) { return topk(t, 3, false).values; }, x, v);
  EXPECT_TRUE(all_close(cpu(jv), jvc, 0, 0));
}

TEST(SelectCuda, BadInput) {
  EMBER_SKIP_WITHOUT_GPU();
  EXPECT_EMBER_ERROR(topk(gpu(random({2, 5}, 1700)), 6), "topk: k = 6 is outside [0, 5]");
  EXPECT_EMBER_ERROR(cumsum(gpu(random({2, 5}, 1701)), 2), "cumsum: dim 2 is out of range");
}

// The row-sum kernel's fast paths: eight partial sums per row (lengths that are not multiples of
// eight leave a tail) and, for fewer rows than threads, rows split across threads (length >= 2^16).
#include "test_util.h"

namespace ember {
namespace {

TEST(SumLongRows, MatchesFloat64Reference) {
  for (DType dt : {DType::Float32, DType::Float64})
    for (Shape shape : {Shape{1, 7}, Shape{3, 13}, Shape{1, 70001}, Shape{1, 65536}, Shape{5, 131075}}) {
      Tensor x = testing::random(shape, uint64_t(shape[1])).to(dt);
      std::vector<double> v = x.to_vector<double>();
      std::vector<double> ref(size_t(shape[0]), 0.0);
      for (int64_t i = 0; i < shape[0]; ++i)
        for (int64_t j = 0; j < shape[1]; ++j) ref[size_t(i)] += v[size_t(i * shape[1] + j)];
      double tol = dt == DType::Float32 ? 1e-4 : 1e-9;
      EXPECT_TRUE(testing::all_close(sum(x, {1}), from_vector(ref, {shape[0]}), tol, 1e-6))
          << name(dt) << " " << to_string(shape);
      double total = 0;
      for (double r : ref) total += r;
      EXPECT_NEAR(sum(x).item(), total, tol * double(shape[0])) << name(dt) << " " << to_string(shape);
    }
  // int64 sums stay exact
  Tensor idx = arange(100000);
  EXPECT_EQ(int64_t(sum(idx).item()), int64_t(100000) * 99999 / 2);
}

}  // namespace
}  // namespace ember

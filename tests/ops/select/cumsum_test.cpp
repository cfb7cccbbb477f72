// cumsum and cumsum_reverse on the CPU against float64 loops: every dim (negative too), 1-d to
// 3-d, non-contiguous inputs, float32's double accumulation; gradients to second order; errors.
#include "ops/select/select_reference.h"

using namespace ember;
using namespace ember::testing;

TEST(SelectCumsum, MatchesReference) {
  std::vector<Shape> shapes = {{1}, {7}, {33}, {3, 7}, {7, 3}, {2, 3, 33}, {4, 1, 5}};
  uint64_t seed = 900;
  for (const Shape& s : shapes)
    for (int64_t d = -int64_t(s.size()); d < int64_t(s.size()); ++d) {
      Tensor x = random(s, ++seed);
      EXPECT_TRUE(all_close(cumsum(x, d), ref_cumsum(x, d), 1e-12, 1e-12)) << to_string(s) << " dim " << d;
      EXPECT_TRUE(all_close(cumsum_reverse(x, d), ref_cumsum(x, d, true), 1e-12, 1e-12)) << to_string(s) << " dim " << d;
      Tensor x32 = x.to(DType::Float32);
      Tensor c32 = cumsum(x32, d);
      EXPECT_EQ(c32.dtype(), DType::Float32);
      EXPECT_TRUE(all_close(c32, ref_cumsum(x32, d), 1e-6, 1e-6)) << to_string(s) << " dim " << d;
      EXPECT_TRUE(c32.is_contiguous());
    }
}

TEST(SelectCumsum, NonContiguousInputs) {
  std::vector<Tensor> xs = {transposed_random({5, 7}, 1000), strided_random({3, 7}, 1001),
                            random({7, 2, 4}, 1002).permute({1, 2, 0}), random({1, 6}, 1003).expand({4, 6})};
  for (const Tensor& x : xs)
    for (int64_t d = 0; d < x.dim(); ++d) {
      EXPECT_TRUE(all_close(cumsum(x, d), ref_cumsum(x, d), 1e-12, 1e-12)) << to_string(x.shape()) << " dim " << d;
      EXPECT_TRUE(all_close(cumsum_reverse(x, d), ref_cumsum(x, d, true), 1e-12, 1e-12));
    }
}

TEST(SelectCumsum, Float32AccumulatesInDouble) {
  // Summed in double and rounded once per output, float32 results equal float64 sums of the
  // same float32 values rounded to float32; a float32 accumulator drifts far from that over 1000 terms.
  Tensor x = uniform({3, 1000}, 0.0, 1.0, DType::Float32);
  Tensor want = cumsum(x.to(DType::Float64), 1).to(DType::Float32);
  EXPECT_TRUE(all_close(cumsum(x, 1), want, 0, 0));
  EXPECT_TRUE(all_close(cumsum_reverse(x, -1), cumsum_reverse(x.to(DType::Float64), -1).to(DType::Float32), 0, 0));
}

TEST(SelectCumsum, EmptyInputs) {
  EXPECT_EQ(cumsum(zeros({0, 3}), 0).shape(), (Shape{0, 3}));
  EXPECT_EQ(cumsum(zeros({2, 0}), 1).shape(), (Shape{2, 0}));
}

TEST(SelectCumsum, Gradcheck) {
  for (int64_t d : {0, 1, -1}) {
    EXPECT_TRUE(grad_ok([d](const std::vector<Tensor>& a) { return cumsum(a[0], d); }, {random({3, 4}, 1100)})) << d;
    EXPECT_TRUE(grad_ok([d](const std::vector<Tensor>& a) { return cumsum_reverse(a[0], d); }, {random({3, 4}, 1101)})) << d;
  }
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return cumsum(a[0], 1); }, {transposed_random({2, 3, 4}, 1102)}));
  // Second order: the gradient of a nonlinear function of the sums, checked by finite differences.
  auto f = [](const Tensor& t) { return sum(square(cumsum(t, 0)) * cumsum_reverse(t, 1)); };
  EXPECT_TRUE(grad_ok([f](const std::vector<Tensor>& a) { return grad(f)(a[0]); }, {random({3, 4}, 1103)}));
}

TEST(SelectCumsum, BackwardIsTheReverseSum) {
  Tensor x = random({4}, 1200).requires_grad_();
  sum(cumsum(x, 0) * from_vector(std::vector<double>{1, 10, 100, 1000})).backward();
  EXPECT_TRUE(all_close(x.grad(), from_vector(std::vector<double>{1111, 1110, 1100, 1000}), 1e-12, 0));
}

TEST(SelectCumsum, BadInput) {
  Tensor x = random({2, 3}, 1300);
  EXPECT_EMBER_ERROR(cumsum(x, 2), "cumsum: dim 2 is out of range for a tensor of shape [2, 3] (expected -2 to 1)");
  EXPECT_EMBER_ERROR(cumsum(x, -3), "cumsum: dim -3 is out of range");
  EXPECT_EMBER_ERROR(cumsum_reverse(x, 5), "cumsum_reverse: dim 5 is out of range");
  EXPECT_EMBER_ERROR(cumsum(arange(4), 0), "cumsum: expected a float32 or float64 tensor, got int64");
  EXPECT_EMBER_ERROR(cumsum(scalar(2.0), 0), "cumsum: expected a tensor with at least one dimension, got a 0-d");
  EXPECT_EMBER_ERROR(cumsum(Tensor(), 0), "cumsum: input is undefined");
}

// gradcheck: passes on correct functions, fails with a useful report on wrong derivative rules
// (primitives declared in the test), and rejects float32.
#include "framework/core/autograd/primitive.h"
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

// x^2 as a primitive whose VJP and/or JVP can be made wrong (3x instead of 2x).
struct SquareAttrs {
  bool wrong_vjp, wrong_jvp;
};
Tensor custom_square(const Tensor& x, bool wrong_vjp, bool wrong_jvp) {
  static const Primitive<SquareAttrs> op =
      Primitive<SquareAttrs>("test_custom_square", /*builtin=*/false)
          .cpu([](const Args& a, const SquareAttrs&) { return KernelOut(a[0] * a[0]); })  // raw: records nothing
          .vjp([](const Tensor& g, const OpCall<SquareAttrs>& c) {
            return Grads{g * c.in[0] * (c.attrs.wrong_vjp ? 3.0 : 2.0)};
          })
          .jvp([](const Args& t, const OpCall<SquareAttrs>& c) { return t[0] * c.in[0] * (c.attrs.wrong_jvp ? 3.0 : 2.0); });
  return op({x}, SquareAttrs{wrong_vjp, wrong_jvp});
}

// The index of the largest |x|, which is where 3x and 2x disagree most.
Shape argmax_abs(const Tensor& x) {
  Shape best;
  double m = -1;
  for_each_index(x.shape(), [&](const Shape& i) {
    if (std::abs(x.at(i)) > m) {
      m = std::abs(x.at(i));
      best = i;
    }
  });
  return best;
}

}  // namespace

TEST(Gradcheck, PassesOnCorrectFunctions) {
  Tensor a = random({2, 3}, 1), b = random({3}, 2, true);
  GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return sin(in[0]) * log(in[1]) + in[0] / in[1]; },
                                {a, b});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_LE(r.max_error, 1e-5);
  EXPECT_NE(r.message.find("passed"), std::string::npos);
  // A correct custom primitive passes too, on a non-contiguous input.
  Tensor t = transposed_random({3, 4}, 3);
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return custom_square(in[0], false, false); }, {t}));
  // A function of no input derivative at all (a constant) passes: zeros everywhere.
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return ones({2}, DType::Float64); }, {a}));
}

TEST(Gradcheck, DoesNotModifyItsInputs) {
  Tensor a = random({3}, 4);
  std::vector<double> before = a.to_vector<double>();
  gradcheck([](const std::vector<Tensor>& in) { return exp(in[0]); }, {a});
  EXPECT_EQ(a.to_vector<double>(), before);
}

TEST(Gradcheck, FailsOnAWrongVjpAndReportsTheWorstElement) {
  Tensor x = random({2, 3}, 5);
  GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return custom_square(in[0], true, false); }, {x});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mode, "vjp");
  EXPECT_EQ(r.input, 0);
  Shape worst = argmax_abs(x);
  EXPECT_EQ(r.input_index, worst);
  EXPECT_EQ(r.output_index, worst);  // the Jacobian is diagonal
  double xv = x.at(worst);
  EXPECT_NEAR(r.analytic, 3 * xv, 1e-9);
  EXPECT_NEAR(r.numeric, 2 * xv, 1e-6);
  EXPECT_NEAR(r.max_error, std::abs(xv) - 1e-3 * std::abs(2 * xv), 1e-6);
  EXPECT_NE(r.message.find("FAILED"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("vjp"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find(to_string(worst)), std::string::npos) << r.message;
  // With the VJP check off, the (correct) JVP passes and the dot test is skipped.
  GradcheckOptions only_jvp;
  only_jvp.check_vjp = false;
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return custom_square(in[0], true, false); }, {x}, only_jvp));
}

TEST(Gradcheck, FailsOnAWrongJvp) {
  Tensor a = random({4}, 6), b = random({3}, 7);
  // Two inputs; only the second goes through the wrong primitive, so the failure names input 1.
  GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) { return concat({sin(in[0]), custom_square(in[1], false, true)}, 0); }, {a, b});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mode, "jvp");
  EXPECT_EQ(r.input, 1);
  Shape worst = argmax_abs(b);
  EXPECT_EQ(r.input_index, worst);
  EXPECT_EQ(r.output_index, (Shape{4 + worst[0]}));
  EXPECT_NEAR(r.analytic, 3 * b.at(worst), 1e-9);
  EXPECT_NEAR(r.numeric, 2 * b.at(worst), 1e-6);
  GradcheckOptions only_vjp;
  only_vjp.check_jvp = false;
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return custom_square(in[0], false, true); }, {b}, only_vjp));
}

TEST(Gradcheck, ConsistentlyWrongRulesFailElementwise) {
  // VJP and JVP wrong in the same way: the dot-product identity <Jv, u> = <v, J^T u> still holds,
  // so only the comparison with finite differences can catch it, and the report names an element.
  Tensor x = random({3}, 8);
  GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return custom_square(in[0], true, true); }, {x});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mode, "vjp") << r.message;
  EXPECT_EQ(r.input_index, argmax_abs(x));
  GradcheckOptions no_fd;  // with the element checks off there is nothing left to run: it passes
  no_fd.check_vjp = no_fd.check_jvp = false;
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return custom_square(in[0], true, true); }, {x}, no_fd).ok);
}

TEST(Gradcheck, RejectsFloat32) {
  Tensor f = random({3}, 9).to(DType::Float32);
  auto id = [](const std::vector<Tensor>& in) { return in[0] * 2.0; };
  EXPECT_EMBER_ERROR(gradcheck(id, {f}), "gradcheck");
  EXPECT_EMBER_ERROR(gradcheck(id, {f}), "float64");
  EXPECT_EMBER_ERROR(gradcheck(id, {random({2}, 1), Tensor()}), "input 1");
  EXPECT_EMBER_ERROR(gradcheck([](const std::vector<Tensor>& in) { return in[0].to(DType::Float32); }, {random({2}, 1)}),
                     "must return float64");
}

// Baydin et al. (2018) Tables 2 and 3, read back from the recorded graph by trace_evaluation, and
// the backward-pass observer it is built on.
#include <cmath>

#include "examples/autodiff/evaluation_trace.h"
#include "test_util.h"

using namespace ember;
using namespace ember::autograd;
using namespace ember::study;

namespace {
Tensor baydin(const std::vector<Tensor>& x) {
  Tensor v1 = log(x[0]);
  Tensor v2 = x[0] * x[1];
  Tensor v3 = sin(x[1]);
  Tensor v4 = v1 + v2;
  return v4 - v3;
}
}  // namespace

TEST(AutodiffTrace, PrimalTraceMatchesTheSurvey) {
  EvaluationTrace t = trace_evaluation(baydin, {2, 5}, {1, 0});
  ASSERT_EQ(t.vars.size(), 7u);
  const char* ops[] = {"input", "input", "log", "mul", "sin", "add", "sub"};
  for (int i = -1; i <= 5; ++i) EXPECT_EQ(t.var(i).op, ops[i + 1]) << "v" << i;
  EXPECT_EQ(t.var(4).args, (std::vector<int>{1, 2}));
  EXPECT_EQ(t.var(5).args, (std::vector<int>{4, 3}));
  EXPECT_DOUBLE_EQ(t.var(-1).value, 2);
  EXPECT_DOUBLE_EQ(t.var(0).value, 5);
  EXPECT_NEAR(t.var(1).value, std::log(2.0), 1e-15);
  EXPECT_DOUBLE_EQ(t.var(2).value, 10);
  EXPECT_NEAR(t.var(3).value, std::sin(5.0), 1e-15);
  EXPECT_NEAR(t.var(4).value, 10.693, 5e-4);
  EXPECT_NEAR(t.y, 11.652, 5e-4);
  EXPECT_DOUBLE_EQ(t.var(5).value, t.y);
}

TEST(AutodiffTrace, TangentTraceGivesDyDx1) {
  EvaluationTrace t = trace_evaluation(baydin, {2, 5}, {1, 0});
  double expect[] = {1, 0, 0.5, 5, 0, 5.5, 5.5};
  for (int i = -1; i <= 5; ++i) EXPECT_NEAR(t.var(i).tangent, expect[i + 1], 1e-12) << "v-dot" << i;
  EXPECT_NEAR(t.y_tangent, 5.5, 1e-12);
  // Along x2 instead: dy/dx2 = x1 - cos(x2).
  EvaluationTrace t2 = trace_evaluation(baydin, {2, 5}, {0, 1});
  EXPECT_NEAR(t2.y_tangent, 2 - std::cos(5.0), 1e-12);
}

TEST(AutodiffTrace, AdjointTraceGivesBothPartialsInOnePass) {
  EvaluationTrace t = trace_evaluation(baydin, {2, 5}, {1, 0});
  ASSERT_EQ(t.gradient.size(), 2u);
  EXPECT_NEAR(t.gradient[0], 5.5, 1e-12);
  EXPECT_NEAR(t.gradient[1], 2 - std::cos(5.0), 1e-12);
  EXPECT_NEAR(t.gradient[1], 1.716, 5e-4);
  // Every node visited once, each after all its children (consumers).
  ASSERT_EQ(t.visit_order.size(), 7u);
  EXPECT_EQ(t.visit_order.front(), 5);
  std::vector<int> pos(7);
  for (size_t k = 0; k < t.visit_order.size(); ++k) pos[size_t(t.visit_order[k] + 1)] = int(k);
  for (const TraceVar& v : t.vars)
    for (int a : v.args) EXPECT_LT(pos[size_t(v.index + 1)], pos[size_t(a + 1)]) << "v" << v.index << " -> v" << a;
  // One step per edge; each is child adjoint times local partial, and they sum to the adjoint.
  EXPECT_EQ(t.steps.size(), 8u);
  std::vector<double> sum(7, 0.0);
  for (const AdjointStep& e : t.steps) {
    EXPECT_NEAR(e.contribution, e.child_adjoint * e.partial, 1e-12);
    EXPECT_NEAR(e.after, e.before + e.contribution, 1e-15);
    EXPECT_DOUBLE_EQ(e.child_adjoint, t.var(e.from).adjoint);
    sum[size_t(e.to + 1)] += e.contribution;
  }
  for (int i = -1; i <= 4; ++i) EXPECT_NEAR(sum[size_t(i + 1)], t.var(i).adjoint, 1e-12) << "v-bar" << i;
  // The survey's adjoints: v-bar3 = -1, and sin's local partial is cos(5).
  EXPECT_NEAR(t.var(3).adjoint, -1, 1e-12);
  EXPECT_NEAR(t.var(-1).adjoint, 5.5, 1e-12);
  EXPECT_NEAR(t.var(0).adjoint, 1.716, 5e-4);
  for (const AdjointStep& e : t.steps)
    if (e.from == 3) EXPECT_NEAR(e.partial, std::cos(5.0), 1e-12);
}

TEST(AutodiffTrace, TablesPrintTheRecordedNumbers) {
  EvaluationTrace t = trace_evaluation(baydin, {2, 5}, {1, 0});
  std::string primal = primal_table(t, TraceFormat::Text);
  EXPECT_NE(primal.find("v5  = v4 - v3  = 10.693 - (-0.959) = 11.652"), std::string::npos) << primal;
  std::string tangent = tangent_table(t, TraceFormat::Text);
  EXPECT_NE(tangent.find("= 1 × 5 + 0 × 2 = 5"), std::string::npos) << tangent;
  std::string adjoint = adjoint_table(t, TraceFormat::Latex);
  EXPECT_NE(adjoint.find("\\begin{tabular}{lllll}"), std::string::npos);
  EXPECT_NE(adjoint.find("$\\bar{x}_{2}$ & $= \\bar{v}_{0}$ &  &  & $= 1.716$"), std::string::npos) << adjoint;
  // Different inputs change the numbers: nothing is typed in.
  EvaluationTrace other = trace_evaluation(baydin, {3, 1}, {1, 0});
  EXPECT_EQ(primal_table(other, TraceFormat::Text).find("11.652"), std::string::npos);
  EXPECT_NEAR(other.gradient[0], 1.0 / 3 + 1, 1e-12);
}

TEST(AutodiffTrace, FormatNumberUsesThreeDecimals) {
  EXPECT_EQ(format_number(2.0), "2");
  EXPECT_EQ(format_number(0.5), "0.5");
  EXPECT_EQ(format_number(11.65209), "11.652");
  EXPECT_EQ(format_number(-0.95892), "-0.959");
  EXPECT_EQ(format_number(-1e-9), "0");
}

TEST(AutodiffTrace, RejectsNonScalarsAndMismatchedTangents) {
  EXPECT_EMBER_ERROR(trace_evaluation(baydin, {2, 5}, {1}), "trace_evaluation");
  EXPECT_EMBER_ERROR(trace_evaluation([](const std::vector<Tensor>& x) { return x[0].expand({3}) * x[1]; }, {2, 5}, {1, 0}),
                     "one-element");
  EXPECT_EMBER_ERROR(trace_evaluation([](const std::vector<Tensor>& x) { return sum(x[0].expand({3}) * x[1]); }, {2, 5}, {1, 0}),
                     "scalars only");
  // A failed trace leaves no observer behind: recording afterwards reports nothing.
  int reported = 0;
  {
    ObserveRecording outer([&](const Node&, const Tensor&) { ++reported; });
    EXPECT_EMBER_ERROR(trace_evaluation(baydin, {2, 5}, {1}), "trace_evaluation");
    (void)make_vjp([](const std::vector<Tensor>& x) { return std::vector<Tensor>{exp(x[0])}; }, {scalar(1.0, DType::Float64)});
  }
  EXPECT_EQ(reported, 2);  // the input and exp, to the outer observer, once trace_evaluation returned
}

TEST(BackwardObserver, ReportsEachVisitAndIsScoped) {
  auto f = [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0] * x[0] + x[1]}; };
  auto [ys, vjp] = make_vjp(f, {scalar(3.0, DType::Float64), scalar(4.0, DType::Float64)});
  std::vector<std::string> ops;
  std::vector<double> mul_to_parents;
  {
    ObserveBackward watch([&](const BackwardStep& s) {
      ops.push_back(s.node->op);
      if (std::string(s.node->op) == "mul")
        for (const Tensor& g : s.to_parents) mul_to_parents.push_back(g.item());
      if (s.node->is_leaf) EXPECT_TRUE(s.to_parents.empty());
    });
    auto g = vjp({scalar(2.0, DType::Float64)});
    EXPECT_DOUBLE_EQ(g[0].item(), 12.0);  // 2 * 2x, x = 3: the fan-out x*x sums both edges
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"add", "input", "mul", "input"}));
  EXPECT_EQ(mul_to_parents, (std::vector<double>{6.0, 6.0}));
  size_t before = ops.size();
  vjp({scalar(1.0, DType::Float64)});  // no observer any more
  EXPECT_EQ(ops.size(), before);
}

TEST(RecordObserver, ReportsNodesInCreationOrderWithTheirValues) {
  std::vector<std::string> ops;
  std::vector<double> values;
  Tensor x = scalar(1.0, DType::Float64).requires_grad_();
  {
    ObserveRecording watch([&](const Node& n, const Tensor& v) {
      ops.push_back(n.op);
      values.push_back(v.item());
    });
    Tensor a = exp(x), b = sin(x);
    (void)(a * b);
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"exp", "sin", "mul"}));
  EXPECT_NEAR(values[0], std::exp(1.0), 1e-15);
  EXPECT_NEAR(values[2], std::exp(1.0) * std::sin(1.0), 1e-15);
  (void)exp(x);  // no observer any more
  EXPECT_EQ(ops.size(), 3u);
}

TEST(AutodiffTrace, ConstantsAndUnknownOpsStillPrint) {
  // x1 * 3 has an untraced operand; tanh has no notation of its own here.
  auto f = [](const std::vector<Tensor>& x) { return tanh(x[0] * 3.0) + x[1]; };
  EvaluationTrace t = trace_evaluation(f, {0.2, 1.0}, {1, 0});
  ASSERT_EQ(t.vars.size(), 5u);
  EXPECT_EQ(t.var(1).args, (std::vector<int>{-1, kConstantArg}));
  EXPECT_NEAR(t.gradient[0], 3 * (1 - std::pow(std::tanh(0.6), 2)), 1e-12);
  EXPECT_NEAR(t.y_tangent, t.gradient[0], 1e-12);
  EXPECT_EQ(t.steps.size(), 4u);  // add -> tanh and x2; tanh -> mul; mul -> x1 only (3 is constant)
  std::string all = primal_table(t, TraceFormat::Text) + tangent_table(t, TraceFormat::Text) +
                    adjoint_table(t, TraceFormat::Latex);
  EXPECT_NE(all.find("v-1 × c"), std::string::npos) << all;
  EXPECT_NE(all.find("tanh v1"), std::string::npos) << all;
}

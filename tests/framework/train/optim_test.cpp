#include <cmath>
#include <map>

#include "framework/core/parallel.h"
#include "framework/train/optim/adam.h"
#include "framework/train/optim/adam_kernel.h"
#include "framework/train/optim/clip_grad.h"
#include "framework/train/optim/lr_schedule.h"
#include "framework/train/optim/param_group.h"
#include "framework/train/optim/sgd.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

Tensor param(std::vector<double> v, DType dt = DType::Float64) {
  Tensor t = from_vector(v);
  if (dt != DType::Float64) t = t.to(dt);
  return t.requires_grad_();
}

// Sets p's gradient to c by running backward on sum(p * c).
void set_grad(Tensor& p, const std::vector<double>& c) {
  p.zero_grad();
  sum(p * from_vector(c).to(p.dtype())).backward();
}

std::vector<double> values(const Tensor& p) { return p.detach().to_vector<double>(); }

void expect_values(const Tensor& p, const std::vector<double>& want, double tol) {
  std::vector<double> got = values(p);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// An independent float64 Adam/AdamW, written from the paper's algorithm (bias-corrected moments).
struct RefAdam {
  double lr, b1, b2, eps, wd;
  bool decoupled;
  std::vector<double> m, v;
  int t = 0;
  void step(std::vector<double>& p, const std::vector<double>& g) {
    if (m.empty()) m.assign(p.size(), 0), v.assign(p.size(), 0);
    ++t;
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = decoupled ? g[i] : g[i] + wd * p[i];
      if (decoupled) p[i] -= lr * wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      double mhat = m[i] / (1 - std::pow(b1, t)), vhat = v[i] / (1 - std::pow(b2, t));
      p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
};

const std::vector<std::vector<double>> kGrads = {{0.5, 1.0, -0.3}, {-0.2, 0.7, 0.1}, {0.9, -1.1, 0.4}, {0.05, 0.2, -0.6}};

}  // namespace

TEST(OptimSGD, HandComputedUpdates) {
  {  // plain: p -= lr g
    Tensor p = param({1.0, -2.0});
    optim::SGD opt({p}, {0.1});
    set_grad(p, {0.5, 1.0});
    opt.step();
    expect_values(p, {0.95, -2.1}, 1e-15);
  }
  {  // momentum 0.9: buf1 = g, buf2 = 0.9 g + g
    Tensor p = param({1.0, -2.0});
    optim::SGD opt({p}, {0.1, 0.9});
    for (int i = 0; i < 2; ++i) set_grad(p, {0.5, 1.0}), opt.step();
    expect_values(p, {0.855, -2.29}, 1e-14);
  }
  {  // Nesterov: step with g + mu * buf
    Tensor p = param({1.0, -2.0});
    optim::SGD opt({p}, {0.1, 0.9, true});
    set_grad(p, {0.5, 1.0});
    opt.step();
    expect_values(p, {0.905, -2.19}, 1e-14);
    set_grad(p, {0.5, 1.0});
    opt.step();
    expect_values(p, {0.7695, -2.461}, 1e-14);
  }
  {  // L2 weight decay 0.1: g = c + 0.1 p
    Tensor p = param({1.0, -2.0});
    optim::SGD opt({p}, {0.1, 0.0, false, 0.1});
    set_grad(p, {0.5, 1.0});
    opt.step();
    expect_values(p, {0.94, -2.08}, 1e-15);
  }
}

TEST(OptimAdam, HandComputedFirstSteps) {
  // With a constant gradient the bias-corrected step is lr * g / |g|: each step moves by lr.
  Tensor p = param({1.0, -2.0});
  optim::AdamOptions o;
  o.lr = 0.1;
  optim::Adam opt({p}, o);
  set_grad(p, {0.5, 1.0});
  opt.step();
  expect_values(p, {0.9, -2.1}, 1e-7);
  set_grad(p, {0.5, 1.0});
  opt.step();
  expect_values(p, {0.8, -2.2}, 1e-7);
  // AdamW: decoupled decay shrinks p by lr * wd first: 1 * 0.99 - 0.1 = 0.89
  Tensor q = param({1.0, -2.0});
  o.weight_decay = 0.1;
  optim::AdamW w({q}, o);
  set_grad(q, {0.5, 1.0});
  w.step();
  expect_values(q, {0.89, -2.08}, 1e-7);
  EXPECT_EQ(w.kind(), "adamw");
  EXPECT_EQ(opt.kind(), "adam");
}

TEST(OptimAdam, MatchesIndependentReferenceOverSeveralSteps) {
  for (bool decoupled : {false, true}) {
    for (DType dt : {DType::Float64, DType::Float32}) {
      Tensor p = param({0.3, -1.2, 2.0}, dt);
      optim::AdamOptions o{0.05, 0.8, 0.95, 1e-6, 0.2};
      std::unique_ptr<optim::Optimizer> opt;
      if (decoupled) opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, o);
      else opt = std::make_unique<optim::Adam>(std::vector<Tensor>{p}, o);
      RefAdam ref{0.05, 0.8, 0.95, 1e-6, 0.2, decoupled};
      std::vector<double> rp = {0.3, -1.2, 2.0};
      for (const auto& g : kGrads) {
        set_grad(p, g);
        opt->step();
        ref.step(rp, g);
      }
      expect_values(p, rp, dt == DType::Float64 ? 1e-13 : 1e-6);
      EXPECT_EQ(opt->steps(), int64_t(kGrads.size()));
    }
  }
}

TEST(OptimAdam, VectorAndScalarKernelsAgreeBitForBit) {
  Generator g(5);
  const int64_t n = 37;  // a tail that the 8-wide loop does not cover
  auto vec = [&](double lo, double hi) { return uniform({n}, lo, hi, DType::Float32, &g).to_vector<float>(); };
  std::vector<float> p = vec(-1, 1), grad = vec(-1, 1), m = vec(-0.1, 0.1), v = vec(0, 0.01);
  std::vector<float> p2 = p, m2 = m, v2 = v;
  optim::AdamScalars<float> s{0.9f, 0.999f, 1e-8f, 0.01f, 1.3f, 0.01f, 0.999f};
  optim::adam_update(p.data(), grad.data(), m.data(), v.data(), n, s, true);
  optim::adam_update(p2.data(), grad.data(), m2.data(), v2.data(), n, s, false);
  EXPECT_EQ(p, p2);
  EXPECT_EQ(m, m2);
  EXPECT_EQ(v, v2);
  EXPECT_NE(p, vec(-1, 1));
}

TEST(Optim, FusedLoopsAgreeWithOpComposedUpdates) {
  auto run = [](bool fused, int which, DType dt) {
    Tensor p = param({0.3, -1.2, 2.0}, dt);
    std::unique_ptr<optim::Optimizer> opt;
    if (which == 0) opt = std::make_unique<optim::SGD>(std::vector<Tensor>{p}, optim::SGDOptions{0.1, 0.9, true, 0.05});
    if (which == 1) opt = std::make_unique<optim::Adam>(std::vector<Tensor>{p}, optim::AdamOptions{0.05, 0.9, 0.99, 1e-8, 0.1});
    if (which == 2) opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, optim::AdamOptions{0.05, 0.9, 0.99, 1e-8, 0.1});
    opt->set_use_fused(fused);
    for (const auto& g : kGrads) set_grad(p, g), opt->step();
    return values(p);
  };
  for (int which = 0; which < 3; ++which) {
    std::vector<double> a = run(true, which, DType::Float64), b = run(false, which, DType::Float64);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-13) << which;
    a = run(true, which, DType::Float32), b = run(false, which, DType::Float32);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << which;
  }
}

TEST(Optim, SkipsParametersWithoutGradientAndZeroGrad) {
  Tensor a = param({1.0}), b = param({2.0});
  optim::SGD opt({a, b}, {0.5});
  set_grad(a, {1.0});
  opt.step();
  expect_values(a, {0.5}, 0);
  expect_values(b, {2.0}, 0);
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
}

TEST(Optim, StateDictResumesExactly) {
  auto make = [](Tensor& p) {
    p = param({0.3, -1.2, 2.0});
    return std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, optim::adamw_defaults());
  };
  Tensor p1, p2;
  auto o1 = make(p1);
  for (size_t i = 0; i < 2; ++i) set_grad(p1, kGrads[i]), o1->step();
  NamedTensors state = o1->state_dict();
  EXPECT_EQ(state.size(), 4u);  // step, lr, exp_avg.0, exp_avg_sq.0
  auto o2 = make(p2);
  o2->load_state_dict(state);
  Tensor(p2).detach().copy_(p1.detach());
  EXPECT_EQ(o2->steps(), 2);
  for (size_t i = 2; i < kGrads.size(); ++i) {
    set_grad(p1, kGrads[i]), o1->step();
    set_grad(p2, kGrads[i]), o2->step();
  }
  EXPECT_EQ(values(p1), values(p2));

  NamedTensors bad = state;
  bad[2].second = zeros({4}, DType::Float64);
  EXPECT_EMBER_ERROR(o2->load_state_dict(bad), "'exp_avg.0' has shape [4], expected [3]");
  bad = state;
  bad.pop_back();
  EXPECT_EMBER_ERROR(o2->load_state_dict(bad), "'exp_avg_sq.0' is missing");
  bad = state;
  bad.emplace_back("momentum_buffer.0", zeros({3}, DType::Float64));
  EXPECT_EMBER_ERROR(o2->load_state_dict(bad), "does not keep");
}

// Step counts above 2^53 are not doubles: a load through item() would round 2^53 + 1 down, and
// Adam's bias correction would then use another t than the saved run.
TEST(Optim, LoadStateDictReadsTheStepExactlyAndRefusesImpossibleCounts) {
  Tensor p = param({0.3, -1.2, 2.0});
  optim::AdamW opt({p}, optim::adamw_defaults());
  NamedTensors state = opt.state_dict();
  auto with_step = [&](int64_t step) {
    NamedTensors s = state;
    s[0].second = from_vector(std::vector<int64_t>{step}, Shape{});
    return s;
  };
  const int64_t odd = (int64_t(1) << 53) + 1;
  opt.load_state_dict(with_step(odd));
  EXPECT_EQ(opt.steps(), odd);
  opt.load_state_dict(with_step(optim::Optimizer::kMaxSteps - 1));
  EXPECT_EQ(opt.steps(), optim::Optimizer::kMaxSteps - 1);
  EXPECT_EMBER_ERROR(opt.load_state_dict(with_step(-1)), "state entry 'step' is -1, expected an update count from 0 to");
  EXPECT_EMBER_ERROR(opt.load_state_dict(with_step(optim::Optimizer::kMaxSteps)), "state entry 'step' is 9223372036854775807");
  EXPECT_EQ(opt.steps(), optim::Optimizer::kMaxSteps - 1);  // a refused state changes nothing
  // A float step (a file written elsewhere) is refused by dtype, not truncated.
  NamedTensors f = state;
  f[0].second = from_vector(std::vector<double>{2.5}, Shape{});
  EXPECT_EMBER_ERROR(opt.load_state_dict(f), "state entry 'step' is float64, expected int64");
  NamedTensors bad_lr = state;
  bad_lr[1].second = from_vector(std::vector<double>{std::nan("")}, Shape{});
  EXPECT_EMBER_ERROR(opt.load_state_dict(bad_lr), "state entry 'lr' is nan, expected a finite learning rate >= 0");
}

TEST(Optim, RejectsBadSettings) {
  Tensor plain = from_vector(std::vector<double>{1.0});
  EXPECT_EMBER_ERROR(optim::SGD({plain}, {0.1}), "does not require gradients");
  Tensor leaf = param({1.0});
  EXPECT_EMBER_ERROR(optim::SGD({leaf * 2.0}, {0.1}), "not a leaf");
  Tensor p = param({1.0});
  EXPECT_EMBER_ERROR(optim::SGD({p}, {-1.0}), "learning rate");
  EXPECT_EMBER_ERROR(optim::SGD({p}, {0.1, 0.0, true}), "Nesterov momentum needs momentum > 0");
  EXPECT_EMBER_ERROR(optim::SGD({p, p}, {0.1}), "same tensor");
  EXPECT_EMBER_ERROR(optim::Adam({p}, {0.1, 1.0}), "betas must be in [0, 1)");
  EXPECT_EMBER_ERROR(optim::SGD(std::vector<Tensor>{}, {0.1}), "empty");
}

TEST(OptimSchedule, WarmupCosineAndStep) {
  optim::LrSchedule s;
  s.kind = optim::LrSchedule::Kind::Cosine;
  s.base_lr = 1.0;
  s.min_lr = 0.1;
  s.warmup_steps = 10;
  s.total_steps = 110;
  s.validate();
  EXPECT_DOUBLE_EQ(s(0), 0.1);  // linear warm-up from base / warmup
  EXPECT_DOUBLE_EQ(s(4), 0.5);
  EXPECT_DOUBLE_EQ(s(9), 1.0);
  EXPECT_DOUBLE_EQ(s(10), 1.0);
  EXPECT_NEAR(s(60), 0.55, 1e-12);  // half way: (base + min) / 2
  EXPECT_NEAR(s(110), 0.1, 1e-12);
  EXPECT_NEAR(s(500), 0.1, 1e-12);  // stays at min_lr after the end
  for (int64_t t = 11; t < 110; ++t) EXPECT_LT(s(t), s(t - 1));

  optim::LrSchedule st;
  st.kind = optim::LrSchedule::Kind::Step;
  st.base_lr = 0.5;
  st.step_size = 3;
  st.gamma = 0.1;
  EXPECT_DOUBLE_EQ(st(0), 0.5);
  EXPECT_DOUBLE_EQ(st(2), 0.5);
  EXPECT_NEAR(st(3), 0.05, 1e-15);
  EXPECT_NEAR(st(7), 0.005, 1e-15);

  optim::LrSchedule c;
  c.base_lr = 0.2;
  EXPECT_DOUBLE_EQ(c(0), 0.2);
  EXPECT_DOUBLE_EQ(c(1000), 0.2);

  s.total_steps = 10;
  EXPECT_EMBER_ERROR(s.validate(), "total_steps (10) > warmup_steps (10)");
  EXPECT_EMBER_ERROR(optim::parse_lr_schedule("linear"), "unknown lr schedule");
}

TEST(OptimClip, ScalesToMaxNormOnce) {
  Tensor a = param({3.0}), b = param({4.0});
  // sum(a * 3 + b * 4): grads 3 and 4, global norm 5
  sum(a * from_vector(std::vector<double>{3.0}) + b * from_vector(std::vector<double>{4.0})).backward();
  EXPECT_NEAR(optim::grad_norm({a, b}), 5.0, 1e-12);
  EXPECT_NEAR(optim::clip_grad_norm({a, b}, 1.0), 5.0, 1e-12);
  EXPECT_NEAR(a.grad().item(), 0.6, 1e-6);
  EXPECT_NEAR(b.grad().item(), 0.8, 1e-6);
  EXPECT_NEAR(optim::clip_grad_norm({a, b}, 2.0), 1.0, 1e-6);  // under the limit: unchanged
  EXPECT_NEAR(a.grad().item(), 0.6, 1e-6);

  // add's VJP hands the same cotangent to both leaves; clipping must scale each exactly once.
  Tensor c = param({1.0, 1.0}), d = param({2.0, 2.0});
  sum((c + d) * 2.0).backward();  // grads (2, 2) and (2, 2): norm 4
  optim::clip_grad_norm({c, d}, 2.0);
  expect_values(c.grad(), {1.0, 1.0}, 1e-6);
  expect_values(d.grad(), {1.0, 1.0}, 1e-6);
  EXPECT_EMBER_ERROR(optim::clip_grad_norm({c}, 0.0), "max_norm must be > 0");
}

// The global norm in one pass over every gradient: float32 and float64 gradients together, one
// from a transposed operand, a parameter without one, sizes spanning several threads' ranges,
// against a float64 loop; and the same at one thread and at two.
TEST(OptimClip, GradNormOfManyGradientsMatchesFloat64Reference) {
  std::vector<Tensor> params;
  double want = 0;
  int64_t i = 0;
  for (int64_t n : {1, 7, 130001, 64, 3}) {
    Tensor g = random({n}, uint64_t(40 + i));
    if (i % 2) g = g.to(DType::Float32);
    Tensor p = zeros({n}, g.dtype()).requires_grad_();
    sum(p * g).backward();
    for (double v : p.grad().to_vector<double>()) want += v * v;
    params.push_back(p);
    ++i;
  }
  Tensor t = zeros({5, 9}, DType::Float64).requires_grad_();
  Tensor gt = random({9, 5}, 99);
  sum(t * gt.transpose(0, 1)).backward();
  for (double v : t.grad().to_vector<double>()) want += v * v;
  params.push_back(t);
  params.push_back(zeros({4}).requires_grad_());  // no gradient: skipped
  const int before = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    EXPECT_NEAR(optim::grad_norm(params), std::sqrt(want), 1e-12 * std::sqrt(want)) << threads << " threads";
  }
  set_num_threads(before);
}

TEST(OptimParamGroups, EachGroupDecaysByItsOwnWeightDecay) {
  // AdamW and Adam over two groups against the float64 reference run per group, on both update
  // paths (the fused CPU loop and the op-composed one).
  for (bool decoupled : {false, true}) {
    for (bool fused : {true, false}) {
      Tensor a = param({0.3, -1.2, 2.0}), b = param({1.5, -0.4, 0.7});
      optim::AdamOptions o{0.05, 0.8, 0.95, 1e-6, 0.5};  // o.weight_decay is replaced by the groups'
      std::vector<optim::ParamGroup> groups{{{a}, 0.2}, {{b}, 0.0}};
      std::unique_ptr<optim::Optimizer> opt;
      if (decoupled) opt = std::make_unique<optim::AdamW>(groups, o);
      else opt = std::make_unique<optim::Adam>(groups, o);
      opt->set_use_fused(fused);
      RefAdam ra{0.05, 0.8, 0.95, 1e-6, 0.2, decoupled}, rb{0.05, 0.8, 0.95, 1e-6, 0.0, decoupled};
      std::vector<double> pa = {0.3, -1.2, 2.0}, pb = {1.5, -0.4, 0.7};
      for (size_t s = 0; s < kGrads.size(); ++s) {
        const auto& gb = kGrads[kGrads.size() - 1 - s];
        set_grad(a, kGrads[s]);
        set_grad(b, gb);
        opt->step();
        ra.step(pa, kGrads[s]);
        rb.step(pb, gb);
      }
      expect_values(a, pa, 1e-13);
      expect_values(b, pb, 1e-13);
      EXPECT_EQ(opt->weight_decay(0), 0.2);
      EXPECT_EQ(opt->weight_decay(1), 0.0);
    }
  }
}

TEST(OptimParamGroups, SGDDecaysEachGroupByItsOwnWeightDecay) {
  Tensor a = param({1.0, -2.0}), b = param({1.0, -2.0});
  optim::SGD opt(std::vector<optim::ParamGroup>{{{a}, 0.1}, {{b}, 0.0}}, {0.1, 0.0, false, 0.7});
  set_grad(a, {0.5, 1.0});
  set_grad(b, {0.5, 1.0});
  opt.step();
  expect_values(a, {0.94, -2.08}, 1e-15);  // g = c + 0.1 p
  expect_values(b, {0.95, -2.1}, 1e-15);   // g = c
}

TEST(OptimParamGroups, StateIsNumberedAcrossTheGroupsInOrder) {
  Tensor a = param({1.0, 2.0}), b = param({3.0}), c = param({4.0, 5.0, 6.0});
  optim::AdamW opt(std::vector<optim::ParamGroup>{{{a, b}, 0.1}, {{c}, 0.0}}, optim::AdamOptions{});
  ASSERT_EQ(opt.params().size(), 3u);
  NamedTensors st = opt.state_dict();
  std::map<std::string, int64_t> numel;
  for (const auto& [n, t] : st) numel[n] = t.numel();
  EXPECT_EQ(numel.at("exp_avg.0"), 2);
  EXPECT_EQ(numel.at("exp_avg.1"), 1);
  EXPECT_EQ(numel.at("exp_avg_sq.2"), 3);
}

TEST(OptimParamGroups, RefusesBadGroups) {
  Tensor a = param({1.0, 2.0}), b = param({3.0});
  optim::AdamOptions o;
  EXPECT_EMBER_ERROR(optim::AdamW(std::vector<optim::ParamGroup>{{{a}, 0.1}, {{b}, -1.0}}, o);, "weight_decay must be finite and >= 0, got -1 in parameter group 1");
  EXPECT_EMBER_ERROR(optim::AdamW(std::vector<optim::ParamGroup>{{{a}, 0.1}, {{a}, 0.0}}, o);, "a parameter may be in one group only");
  EXPECT_EMBER_ERROR(optim::SGD(std::vector<optim::ParamGroup>{{{}, 0.1}, {{}, 0.0}}, {0.1});, "the parameter list is empty");
  // Without groups the options' weight decay is checked the same way.
  o.weight_decay = -0.5;
  EXPECT_EMBER_ERROR(optim::AdamW(std::vector<Tensor>{a}, o), "weight_decay must be finite and >= 0, got -0.5");
  EXPECT_EMBER_ERROR(optim::SGD({a}, {0.1, 0.0, false, -0.5}), "weight_decay must be finite and >= 0, got -0.5");
  o.weight_decay = 0.0;
  EXPECT_EMBER_ERROR(optim::AdamW(std::vector<Tensor>{a}, o).weight_decay(1), "no parameter 1 (it holds 1)");
  // An empty group next to a full one is fine (a model without biases has no undecayed group).
  optim::AdamW ok(std::vector<optim::ParamGroup>{{{a, b}, 0.1}, {{}, 0.0}}, o);
  EXPECT_EQ(ok.params().size(), 2u);
}

TEST(OptimParamGroups, DecayMatricesOnlySplitsByDimensionKeepingOrder) {
  Generator g(3);
  Tensor w1 = normal({3, 4}, 0, 1, DType::Float32, &g).requires_grad_(), b1 = normal({4}, 0, 1, DType::Float32, &g).requires_grad_();
  Tensor w2 = normal({2, 3, 4}, 0, 1, DType::Float32, &g).requires_grad_(), s = scalar(1.0).requires_grad_();
  Tensor w3 = normal({5, 2}, 0, 1, DType::Float32, &g).requires_grad_();
  std::vector<optim::ParamGroup> groups = optim::decay_matrices_only({w1, b1, w2, s, w3}, 0.25);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].weight_decay, 0.25);
  EXPECT_EQ(groups[1].weight_decay, 0.0);
  ASSERT_EQ(groups[0].params.size(), 3u);
  ASSERT_EQ(groups[1].params.size(), 2u);
  EXPECT_EQ(groups[0].params[0].impl(), w1.impl());
  EXPECT_EQ(groups[0].params[1].impl(), w2.impl());
  EXPECT_EQ(groups[0].params[2].impl(), w3.impl());
  EXPECT_EQ(groups[1].params[0].impl(), b1.impl());
  EXPECT_EQ(groups[1].params[1].impl(), s.impl());
}

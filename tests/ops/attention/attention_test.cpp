// attention() as a recorded primitive: every CPU variant (the library's flash2, on each instruction
// set the CPU has, the study's standard and flash, and a user's variant) against the composite
// float64 reference, gradcheck of each, all of them agreeing on forward and all three gradients,
// odd sizes, causal, batch/heads, views, higher order through the composite backward, threads.
#include <cmath>

#include "ops/attention/attention_test_util.h"

using namespace ember;
using namespace ember::testing;
using namespace attention_test;

TEST(Attention, EveryVariantMatchesTheCompositeReference) {
  uint64_t seed = 1;
  for (const Case& c : cases())
    for (bool causal : {false, true}) {
      if (causal && c.kv[c.kv.size() - 2] < c.q[c.q.size() - 2]) continue;
      Tensor q = random(c.q, seed++), k = random(c.kv, seed++), v = random(c.kv, seed++);
      Tensor ref = attention_composite(q, k, v, opts("standard", causal));
      for (const std::string& impl : impls()) {
        SCOPED_TRACE(str(impl, " causal=", causal, " q", to_string(c.q), " kv", to_string(c.kv), " M=", c.block_m));
        AttentionForward f = attention_forward(q, k, v, opts(impl, causal, c.block_m));
        EXPECT_TRUE(all_close(f.out, ref, 1e-12, 1e-10));
        EXPECT_TRUE(all_close(attention(q, k, v, opts(impl, causal, c.block_m)), ref, 1e-12, 1e-10));
        // L = log sum_j exp(s_ij) over the visible keys, from the same scores.
        Tensor s = matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(q.size(-1))));
        Tensor p = attention_forward(q, k, v, opts("standard", causal)).saved;  // P, (BH, Nq, Nk)
        // Where P > 0, s - L = log P.
        Tensor lhs = s - f.lse.unsqueeze(-1);
        std::vector<double> a = lhs.to_vector<double>(), pv = p.to_vector<double>();
        for (size_t i = 0; i < a.size(); ++i)
          if (pv[i] > 0) ASSERT_NEAR(a[i], std::log(pv[i]), 1e-10) << "element " << i;
      }
    }
}

TEST(Attention, Float32MatchesFloat64) {
  Tensor q = random({2, 2, 45, 16}, 11), k = random({2, 2, 45, 16}, 12), v = random({2, 2, 45, 16}, 13);
  for (bool causal : {false, true})
    for (const std::string& impl : impls()) {
      Tensor ref = attention_composite(q, k, v, opts(impl, causal));
      Tensor out = attention(q.to(DType::Float32), k.to(DType::Float32), v.to(DType::Float32), opts(impl, causal, 200));
      EXPECT_EQ(out.dtype(), DType::Float32);
      EXPECT_TRUE(all_close(out, ref, 1e-5, 1e-4)) << impl << " causal=" << causal;
    }
}

TEST(Attention, GradcheckEveryVariant) {
  GradcheckOptions g;
  g.atol = 1e-6;
  g.rtol = 1e-4;
  for (const std::string& impl : impls())
    for (bool causal : {false, true}) {
      SCOPED_TRACE(str(impl, " causal=", causal));
      AttentionOptions o = opts(impl, causal, 12);  // d = 3: Bc = 1, Br = 1: every block boundary
      EXPECT_TRUE(grad_ok([o](const std::vector<Tensor>& x) { return attention(x[0], x[1], x[2], o); },
                          {random({2, 5, 3}, 21), random({2, 5, 3}, 22), random({2, 5, 3}, 23)}, g));
      AttentionOptions o2 = opts(impl, causal, 20);  // Bc = 2, Br = 2 over N = 5, 6
      o2.scale = 0.7;
      EXPECT_TRUE(grad_ok([o2](const std::vector<Tensor>& x) { return attention(x[0], x[1], x[2], o2); },
                          {random({1, 2, 5, 2}, 24), random({1, 2, 6, 2}, 25), random({1, 2, 6, 2}, 26)}, g));
    }
}

TEST(Attention, EveryVariantAgreesOnForwardAndAllGradients) {
  uint64_t seed = 100;
  for (DType dt : {DType::Float64, DType::Float32})
    for (const Case& c : cases())
      for (bool causal : {false, true}) {
        if (causal && c.kv[c.kv.size() - 2] < c.q[c.q.size() - 2]) continue;
        SCOPED_TRACE(str(dt, " causal=", causal, " q", to_string(c.q), " kv", to_string(c.kv)));
        Tensor q = random(c.q, seed++).to(dt), k = random(c.kv, seed++).to(dt), v = random(c.kv, seed++).to(dt);
        Tensor w = random(c.q, seed++).to(dt);  // a random cotangent
        const std::vector<std::string> names = impls();
        std::vector<std::vector<Tensor>> res;
        for (const std::string& impl : names) {
          AttentionOptions o = opts(impl, causal, c.block_m);
          auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention(x[0], x[1], x[2], o)}; },
                                    {q, k, v});
          std::vector<Tensor> g = vjp({w});
          res.push_back({ys[0], g[0], g[1], g[2]});
        }
        double tol = dt == DType::Float64 ? 1e-11 : 2e-5;
        const char* what[] = {"out", "dq", "dk", "dv"};
        for (size_t r = 1; r < res.size(); ++r)
          for (int i = 0; i < 4; ++i)
            EXPECT_TRUE(all_close(res[r][i], res[0][i], tol, tol * 10)) << what[i] << " " << names[r] << " vs " << names[0];
        // And the composite reference's gradients.
        auto [ys, vjp] = make_vjp(
            [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention_composite(x[0], x[1], x[2], opts("flash", causal))}; },
            {q, k, v});
        std::vector<Tensor> g = vjp({w});
        for (size_t r = 0; r < res.size(); ++r)
          for (int i = 0; i < 3; ++i)
            EXPECT_TRUE(all_close(res[r][i + 1], g[i], tol, tol * 10)) << what[i + 1] << " vs composite, " << names[r];
      }
}

TEST(Attention, NonContiguousInputs) {
  // (B, N, H, d) transposed to (B, H, N, d), as a model's projection produces them.
  Tensor q = random({2, 9, 3, 4}, 41).transpose(1, 2), k = random({2, 9, 3, 4}, 42).transpose(1, 2),
         v = random({2, 9, 3, 4}, 43).transpose(1, 2);
  ASSERT_FALSE(q.is_contiguous());
  for (const std::string& impl : impls()) {
    Tensor ref = attention_composite(q.contiguous(), k.contiguous(), v.contiguous(), opts(impl, true));
    EXPECT_TRUE(all_close(attention(q, k, v, opts(impl, true, 32)), ref, 1e-12, 1e-10));
  }
}

TEST(Attention, SecondOrderThroughTheCompositeBackward) {
  // h(q) = sum((d/dq sum(attention(q, k, v) * w))^2): its gradient needs the derivative of the backward.
  Tensor q = random({2, 4, 3}, 51), k = random({2, 5, 3}, 52), v = random({2, 5, 3}, 53), w = random({2, 4, 3}, 54);
  for (bool causal : {false, true}) {
    auto h_of = [&](const std::string& impl, bool composite) {
      return [=](const Tensor& x) {
        AttentionOptions o = opts(impl, causal, 12);
        Tensor dq = grad([&](const Tensor& y) {
          return sum((composite ? attention_composite(y, k, v, o) : attention(y, k, v, o)) * w);
        })(x);
        return sum(square(dq));
      };
    };
    Tensor ref = grad(h_of("flash", true))(q);
    for (const std::string& impl : impls())
      EXPECT_TRUE(all_close(grad(h_of(impl, false))(q), ref, 1e-10, 1e-8)) << impl << " causal=" << causal;
  }
}

TEST(Attention, BackwardOnRequiresGradLeaves) {
  Tensor q = random({1, 2, 10, 4}, 61).requires_grad_(), k = random({1, 2, 10, 4}, 62).requires_grad_(),
         v = random({1, 2, 10, 4}, 63).requires_grad_();
  sum(square(attention(q, k, v, opts("flash", true, 32)))).backward();
  Tensor gq = q.grad(), gk = k.grad(), gv = v.grad();
  auto g = value_and_grads([](const std::vector<Tensor>& x) {
    return sum(square(attention_composite(x[0], x[1], x[2], opts("flash", true))));
  })({q.detach(), k.detach(), v.detach()}).second;
  EXPECT_TRUE(all_close(gq, g[0], 1e-11, 1e-9));
  EXPECT_TRUE(all_close(gk, g[1], 1e-11, 1e-9));
  EXPECT_TRUE(all_close(gv, g[2], 1e-11, 1e-9));
}

TEST(Attention, ThreadsSharingAHeadAgree) {
  // Big enough that the kernels split one batch-head over threads (the flash backward's column
  // blocks of one head then add into the same dQ rows from different threads).
  Tensor q = random({1, 1, 300, 16}, 111), k = random({1, 1, 300, 16}, 112), v = random({1, 1, 300, 16}, 113),
         w = random({1, 1, 300, 16}, 114);
  for (bool causal : {false, true}) {
    auto grads = [&](const std::string& impl, int64_t block_m, bool composite) {
      AttentionOptions o = opts(impl, causal, block_m);
      auto [ys, vjp] = make_vjp(
          [&](const std::vector<Tensor>& x) {
            return std::vector<Tensor>{composite ? attention_composite(x[0], x[1], x[2], o) : attention(x[0], x[1], x[2], o)};
          },
          {q, k, v});
      std::vector<Tensor> g = vjp({w});
      g.insert(g.begin(), ys[0]);
      return g;
    };
    std::vector<Tensor> ref = grads("flash", 0, true);
    for (auto [impl, m] : {std::pair{"flash", int64_t(64)}, std::pair{"flash", int64_t(200)},
                           std::pair{"standard", int64_t(64)}, std::pair{"flash2", int64_t(0)}}) {
      std::vector<Tensor> g = grads(impl, m, false);
      for (int i = 0; i < 4; ++i)
        EXPECT_TRUE(all_close(g[i], ref[i], 1e-11, 1e-9)) << impl << " M=" << m << " causal=" << causal << " output " << i;
    }
  }
}

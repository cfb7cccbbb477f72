// attention(): every CPU variant (the library's flash2, on each instruction set the CPU has, the
// study's standard and flash, and a user's variant registered here) against the composite float64
// reference, gradcheck of each, all of them agreeing on forward and all three gradients, odd
// sizes, causal, batch/heads, views, higher order through the composite backward, the study's byte
// counters, memory, the registration API, and bad input.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>

#include "examples/attention/study/io_counters.h"
#include "examples/attention/study/study_kernels.h"
#include "ops/attention/attention.h"
#include "ops/attention/cpu/kernels.h"
#include "ops/attention/cpu/tile_math.h"
#include "framework/core/parallel.h"
#include "ops/op_list.h"
#include "study_kernels.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

// A user's variant: the study's Algorithm 1 with blocks of 2 query rows x 3 keys, so that every
// loop has a ragged edge, counting its calls (which shows which backward a recorded call runs).
const char* const kTiny = "flash_2x3";
std::atomic<int> g_tiny_forwards{0}, g_tiny_backwards{0};

template <class T>
cpu::attn::Problem<T> tiny_problem(const AttentionArgs& a) {
  cpu::attn::Problem<T> p = cpu::attn::Problem<T>::of(a);
  p.br = 2;
  p.bc = 3;
  return p;
}

AttentionKernels tiny_kernels() {
  AttentionKernels k;
  k.forward = [](const AttentionArgs& a, void* o, void* lse) {
    ++g_tiny_forwards;
    EMBER_DISPATCH_FLOAT(a.dtype, "flash_2x3", [&] {
      using T = scalar_t;
      attention_study::flash_forward(tiny_problem<T>(a), static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                     static_cast<const T*>(a.v), static_cast<T*>(o), static_cast<T*>(lse));
    });
    return Tensor();
  };
  k.backward = [](const AttentionArgs& a, const AttentionGradArgs& g) {
    ++g_tiny_backwards;
    EMBER_DISPATCH_FLOAT(a.dtype, "flash_2x3 backward", [&] {
      using T = scalar_t;
      attention_study::flash_backward(tiny_problem<T>(a), static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                      static_cast<const T*>(a.v), static_cast<const T*>(g.out),
                                      static_cast<const T*>(g.lse), static_cast<const T*>(g.dout),
                                      static_cast<T*>(g.dq), static_cast<T*>(g.dk), static_cast<T*>(g.dv));
    });
  };
  return k;
}

// The library's flash2 forced onto each instruction set below the best this CPU has ("flash2" is
// the best): its micro-kernel's register block (NR = 64, 16 or 8 floats) sets the kernel's block
// sizes and its row kernels differ, so an AVX-512 machine checks the AVX2 and portable code too.
AttentionKernels flash2_on(cpu::CpuIsa isa) {
  AttentionKernels k;
  k.forward = [isa](const AttentionArgs& a, void* o, void* lse) {
    EMBER_DISPATCH_FLOAT(a.dtype, "flash2 on one ISA", [&] {
      using T = scalar_t;
      cpu::attn::flash2_forward(cpu::attn::Problem<T>::of(a), static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                static_cast<const T*>(a.v), static_cast<T*>(o), static_cast<T*>(lse), isa);
    });
    return Tensor();
  };
  k.backward = [isa](const AttentionArgs& a, const AttentionGradArgs& g) {
    EMBER_DISPATCH_FLOAT(a.dtype, "flash2 on one ISA, backward", [&] {
      using T = scalar_t;
      cpu::attn::flash2_backward(cpu::attn::Problem<T>::of(a), static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                 static_cast<const T*>(a.v), static_cast<const T*>(g.out),
                                 static_cast<const T*>(g.lse), static_cast<const T*>(g.dout), static_cast<T*>(g.dq),
                                 static_cast<T*>(g.dk), static_cast<T*>(g.dv), isa);
    });
  };
  return k;
}

std::vector<std::string> flash2_isa_names() {
  std::vector<std::string> n;
  for (int i = 0; i < int(cpu::best_cpu_isa()); ++i) n.push_back(str("flash2_", cpu::name(cpu::CpuIsa(i))));
  return n;
}

void register_variants() {
  ember::testing::register_study_kernels();
  static std::once_flag once;
  std::call_once(once, [] {
    register_attention_variant(kTiny, tiny_kernels());
    for (int i = 0; i < int(cpu::best_cpu_isa()); ++i)
      register_attention_variant(flash2_isa_names()[size_t(i)], flash2_on(cpu::CpuIsa(i)));
  });
}

// Every CPU variant registered: the library's flash2, the study's standard and flash, kTiny, and
// flash2 on each lesser instruction set.
std::vector<std::string> impls() {
  register_variants();
  return attention_variants(Device::CPU);
}

AttentionOptions opts(const std::string& impl, bool causal, int64_t block_m = 0) {
  register_variants();
  AttentionOptions o;
  o.impl = impl;
  o.causal = causal;
  o.block_m = block_m;
  return o;
}

struct Case {
  Shape q, kv;
  int64_t block_m;  // small budgets make blocks that do not divide N
};

// Shapes: (N, d), (B, N, d), (B, H, N, d); N of 1, 7, 33, 127; Nq != Nk; M giving Bc of 1..many.
std::vector<Case> cases() {
  return {{{1, 1}, {1, 1}, 4},          {{7, 5}, {7, 5}, 40},           {{2, 7, 5}, {2, 7, 5}, 0},
          {{2, 3, 33, 8}, {2, 3, 33, 8}, 96}, {{1, 2, 127, 16}, {1, 2, 127, 16}, 640}, {{2, 5, 3}, {2, 9, 3}, 36},
          {{1, 1, 33, 4}, {1, 1, 70, 4}, 16}};
}

}  // namespace

TEST(Attention, BlockSizesFollowThePaper) {
  AttentionBlocks b = attention_blocks(64, 65536);
  EXPECT_EQ(b.bc, 256);  // ceil(M / 4d)
  EXPECT_EQ(b.br, 64);   // min(ceil(M / 4d), d)
  b = attention_blocks(8, 100);
  EXPECT_EQ(b.bc, 4);  // ceil(100 / 32)
  EXPECT_EQ(b.br, 4);
  EXPECT_GT(default_attention_block_m(), 0);
}

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

TEST(Attention, BackwardOpsMatchTheComposite) {
  Tensor q = random({3, 17, 6}, 31), k = random({3, 17, 6}, 32), v = random({3, 17, 6}, 33), dout = random({3, 17, 6}, 34);
  for (bool causal : {false, true}) {
    AttentionOptions os = opts("standard", causal, 48), of = opts("flash", causal, 48);
    AttentionForward fs = attention_forward(q, k, v, os), ff = attention_forward(q, k, v, of);
    EXPECT_FALSE(ff.saved.defined());  // flash never materialises P
    ASSERT_TRUE(fs.saved.defined());
    EXPECT_EQ(fs.saved.shape(), (Shape{3, 17, 17}));
    auto [ys, vjp] = make_vjp(
        [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention_composite(x[0], x[1], x[2], os)}; }, {q, k, v});
    std::vector<Tensor> ref = vjp({dout});
    std::vector<std::pair<std::string, AttentionGrads>> grads = {
        {"standard, P saved", attention_study::attention_backward_standard(q, k, v, fs.out, fs.saved, dout, os)},
        {"standard, P recomputed", attention_study::attention_backward_standard(q, k, v, fs.out, Tensor(), dout, os)},
        {"flash", attention_study::attention_backward_flash(q, k, v, ff.out, ff.lse, dout, of)}};
    // And attention_backward of every variant, from what its own forward saved.
    for (const std::string& impl : impls()) {
      AttentionOptions o = opts(impl, causal, 48);
      AttentionForward f = attention_forward(q, k, v, o);
      grads.push_back({impl, attention_backward(q, k, v, f.out, f.lse, f.saved, dout, o)});
    }
    for (const auto& [what, g] : grads) {
      SCOPED_TRACE(str(what, " causal=", causal));
      EXPECT_TRUE(all_close(g.dq, ref[0], 1e-11, 1e-9));
      EXPECT_TRUE(all_close(g.dk, ref[1], 1e-11, 1e-9));
      EXPECT_TRUE(all_close(g.dv, ref[2], 1e-11, 1e-9));
    }
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

TEST(Attention, FewQueryRowsTakeDotProductsAgainstKeysInPlace) {
  // One to three queries (a generation step) against many keys, over several key blocks: the
  // kernels skip transposing K below kFewRows rows; four rows take the transposed-tile path. Head
  // sizes below and past the 16-byte vectors and GPT-2's 64, in blocks of 8 keys and in one block
  // of all 70, on every instruction set.
  uint64_t seed = 80;
  for (int64_t nq : {1, 2, 3, 4})
    for (int64_t d : {5, 16, 64, 77})
      for (bool causal : {false, true})
        for (int64_t block_m : {int64_t(0), 4 * d * 8})
          for (const std::string& impl : impls()) {
            SCOPED_TRACE(str(impl, " nq=", nq, " d=", d, " causal=", causal, " M=", block_m));
            Tensor q = random({2, 3, nq, d}, seed++), k = random({2, 3, 70, d}, seed++), v = random({2, 3, 70, d}, seed++);
            Tensor ref = attention_composite(q, k, v, opts(impl, causal));
            EXPECT_TRUE(all_close(attention(q, k, v, opts(impl, causal, block_m)), ref, 1e-12, 1e-10));
            EXPECT_TRUE(all_close(attention(q.to(DType::Float32), k.to(DType::Float32), v.to(DType::Float32),
                                            opts(impl, causal, block_m)).to(DType::Float64), ref, 1e-5, 1e-4));
          }
}

TEST(Attention, TheDecodePathIsAlgorithm1OnAFewRowsBitForBit) {
  // The library's generation-step kernel (cpu/decode.cpp) does Algorithm 1's arithmetic for fewer
  // than 4 queries, in the same order and with the same key blocks: its results equal the study's
  // flash kernel's exactly. Without a budget M the kernel takes its own key block
  // (decode_key_block), which is Algorithm 1's block for M = 4 d decode_key_block.
  uint64_t seed = 130;
  for (int64_t d : {16, 64})
    for (int64_t nq : {1, 2, 3})
      for (bool causal : {false, true})
        for (int64_t block_m : {int64_t(0), int64_t(4 * d * 5)}) {
          SCOPED_TRACE(str("d=", d, " nq=", nq, " causal=", causal, " M=", block_m));
          Tensor q = random({2, 3, nq, d}, seed++).to(DType::Float32), kbuf = random({2, 3, 90, d}, seed++).to(DType::Float32),
                 vbuf = random({2, 3, 90, d}, seed++).to(DType::Float32);
          Tensor k = kbuf.slice(2, 0, 77), v = vbuf.slice(2, 0, 77);  // a KV cache's filled part, read in place
          const int64_t alg1_m = block_m > 0 ? block_m : 4 * d * cpu::attn::decode_key_block(d, sizeof(float));
          std::vector<float> lib = attention(q, k, v, opts("flash2", causal, block_m)).to_vector<float>();
          std::vector<float> alg1 = attention(q, k, v, opts("flash", causal, alg1_m)).to_vector<float>();
          ASSERT_EQ(lib.size(), alg1.size());
          for (size_t i = 0; i < lib.size(); ++i) ASSERT_EQ(lib[i], alg1[i]) << "element " << i;
        }
}

TEST(Attention, TheDecodeKeyBlockIsFourKiBOfKeysAndAtLeastEight) {
  using cpu::attn::decode_key_block;
  EXPECT_EQ(decode_key_block(64, sizeof(float)), 16);
  EXPECT_EQ(decode_key_block(128, sizeof(float)), 8);
  EXPECT_EQ(decode_key_block(16, sizeof(float)), 64);
  EXPECT_EQ(decode_key_block(64, sizeof(double)), 8);
  EXPECT_EQ(decode_key_block(1000, sizeof(float)), 8);  // rows over 512 bytes: the floor of 8 keys
  EXPECT_EQ(decode_key_block(1, sizeof(float)), 1024);
  // A step's result does not depend on the block beyond rounding: the default block against one
  // block of all keys and against Algorithm 1's block for half the L2.
  Tensor q = random({1, 4, 1, 64}, 140), k = random({1, 4, 300, 64}, 141), v = random({1, 4, 300, 64}, 142);
  Tensor ref = attention_composite(q, k, v, opts("flash2", true));
  for (int64_t block_m : {int64_t(0), int64_t(4 * 64 * 300), default_attention_block_m()})
    EXPECT_TRUE(all_close(attention(q, k, v, opts("flash2", true, block_m)), ref, 1e-12, 1e-10)) << "M=" << block_m;
}

TEST(Attention, KeysAndValuesReadInPlaceFromALargerBuffer) {
  // A KV cache's view: (B, H, capacity, d) storage, the first `len` positions visible; the forward
  // reads it in place (slices a uniform distance apart). Also a view whose heads are not uniformly
  // spaced (a step over heads), which must still be right (copied first), and gradients through both.
  Tensor kbuf = random({2, 3, 20, 4}, 61), vbuf = random({2, 3, 20, 4}, 62);
  Tensor k = kbuf.slice(2, 0, 11), v = vbuf.slice(2, 0, 11);
  Tensor q = random({2, 3, 2, 4}, 63);
  Tensor kbuf5 = random({2, 5, 11, 4}, 64), vbuf5 = random({2, 5, 11, 4}, 65);
  Tensor k_step = kbuf5.slice(1, 0, 5, 2), v_step = vbuf5.slice(1, 0, 5, 2);  // heads 0, 2, 4: B stride != 3 * H stride
  for (const std::string& impl : impls())
    for (bool causal : {false, true}) {
      SCOPED_TRACE(str(impl, " causal=", causal));
      Tensor ref = attention_composite(q, k.contiguous(), v.contiguous(), opts(impl, causal));
      EXPECT_TRUE(all_close(attention(q, k, v, opts(impl, causal, 32)), ref, 1e-12, 1e-10));
      Tensor ref_step = attention_composite(q, k_step.contiguous(), v_step.contiguous(), opts(impl, causal));
      EXPECT_TRUE(all_close(attention(q, k_step, v_step, opts(impl, causal, 32)), ref_step, 1e-12, 1e-10));
      EXPECT_TRUE(all_close(attention(q, k, v_step, opts(impl, causal, 32)),
                            attention_composite(q, k.contiguous(), v_step.contiguous(), opts(impl, causal)), 1e-12, 1e-10));
    }
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& x) { return attention(x[0], x[1].slice(2, 0, 5), x[2].slice(2, 0, 5), opts("flash", true, 32)); },
                      {random({1, 2, 3, 4}, 66), random({1, 2, 8, 4}, 67), random({1, 2, 8, 4}, 68)}));
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

TEST(Attention, ByteCountersMatchTheAlgorithms) {
  const int64_t n = 256, d = 16, m = 1024;  // Bc = 16, Br = 16: Tr = Tc = 16
  Tensor q = random({1, 1, n, d}, 71).to(DType::Float32), k = random({1, 1, n, d}, 72).to(DType::Float32),
         v = random({1, 1, n, d}, 73).to(DType::Float32);
  auto count = [&](const std::string& impl) {
    attention_study::reset_attention_io();
    attention_study::set_attention_io_counting(true);
    attention_forward(q, k, v, opts(impl, false, m));
    attention_study::set_attention_io_counting(false);
    return attention_study::attention_io();
  };
  attention_study::AttentionIo f = count("flash"), s = count("standard");
  const int64_t tr = n / 16, tc = n / 16;
  attention_study::Problem<float> pr;
  pr.nq = pr.nk = n;
  pr.d = d;
  pr.br = pr.bc = 16;
  const int64_t per = attention_study::flash_row_blocks_per_task(pr), chunks = (tr + per - 1) / per;
  // Algorithm 1: each task reads K and V once; every column block reads Q_i, O_i, m_i, l_i and writes
  // O_i, m_i, l_i back; plus the initialisation and the final normalisation.
  EXPECT_EQ(f.read_bytes, 4 * (chunks * 2 * n * d + tc * (2 * n * d + 2 * n) + n * (d + 2)));
  EXPECT_EQ(f.write_bytes, 4 * (n * (d + 2) + tc * (n * d + 2 * n) + n * (d + 1)));
  // Standard writes S and P (N^2 each) and reads them back.
  EXPECT_GE(s.write_bytes, 4 * 2 * n * n);
  EXPECT_GE(s.read_bytes, 4 * 2 * n * n);
  EXPECT_LT(f.read_bytes + f.write_bytes, s.read_bytes + s.write_bytes);
  // Off: nothing counted.
  attention_study::reset_attention_io();
  attention_forward(q, k, v, opts("flash", false, m));
  EXPECT_EQ(attention_study::attention_io().read_bytes, 0);
  // The library's kernel is not instrumented.
  attention_study::AttentionIo f2 = count("flash2");
  EXPECT_EQ(f2.read_bytes + f2.write_bytes, 0);
}

TEST(Attention, UnfusedIsTheStandardStepsInAnotherLoopOrder) {
  // Same steps, same arithmetic, so the same bits and the same counted bytes; only the order of
  // the strips differs (each step over all of them before the next). Causal, several heads, a
  // budget whose blocks do not divide N.
  for (bool causal : {false, true}) {
    Tensor q = random({2, 3, 77, 12}, 81).to(DType::Float32), k = random({2, 3, 77, 12}, 82).to(DType::Float32),
           v = random({2, 3, 77, 12}, 83).to(DType::Float32);
    auto run = [&](const std::string& impl) {
      attention_study::reset_attention_io();
      attention_study::set_attention_io_counting(true);
      AttentionForward f = attention_forward(q, k, v, opts(impl, causal, 300));
      attention_study::set_attention_io_counting(false);
      return std::make_pair(f, attention_study::attention_io());
    };
    auto [s, sio] = run("standard");
    auto [u, uio] = run("unfused");
    EXPECT_EQ(s.out.to_vector<float>(), u.out.to_vector<float>()) << causal;
    EXPECT_EQ(s.lse.to_vector<float>(), u.lse.to_vector<float>()) << causal;
    EXPECT_EQ(s.saved.to_vector<float>(), u.saved.to_vector<float>()) << causal;  // P, for the backward
    EXPECT_EQ(sio.read_bytes, uio.read_bytes);
    EXPECT_EQ(sio.write_bytes, uio.write_bytes);
    EXPECT_GT(uio.read_bytes, 0);
  }
  // Its step times are recorded, each one measured.
  Tensor q = random({1, 1, 512, 32}, 84).to(DType::Float32);
  auto t0 = std::chrono::steady_clock::now();
  attention(q, q, q, opts("unfused", false));
  double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  attention_study::AttentionPhaseTimes t = attention_study::last_unfused_phase_times();
  EXPECT_GT(t.scores_ms, 0);
  EXPECT_GT(t.softmax_ms, 0);
  EXPECT_GT(t.output_ms, 0);
  EXPECT_LE(t.scores_ms + t.softmax_ms + t.output_ms, wall);
}

TEST(Attention, BackwardByteCountersMatchTheAlgorithms) {
  // One thread, so that Algorithm 1's backward flushes its private dQ once; non-causal, N = n.
  const int saved = num_threads();
  set_num_threads(1);
  const int64_t n = 256, d = 16, m = 1024;  // Bc = 16, Br = 16: Tr = Tc = 16
  Tensor q = random({1, 1, n, d}, 75).to(DType::Float32), k = random({1, 1, n, d}, 76).to(DType::Float32),
         v = random({1, 1, n, d}, 77).to(DType::Float32), dout = random({1, 1, n, d}, 78).to(DType::Float32);
  auto count = [&](const std::string& impl) {
    AttentionOptions o = opts(impl, false, m);
    AttentionForward f = attention_forward(q, k, v, o);
    attention_study::reset_attention_io();
    attention_study::set_attention_io_counting(true);
    if (impl == "standard") attention_study::attention_backward_standard(q, k, v, f.out, f.saved, dout, o);
    else attention_study::attention_backward_flash(q, k, v, f.out, f.lse, dout, o);
    attention_study::set_attention_io_counting(false);
    return attention_study::attention_io();
  };
  attention_study::AttentionIo f = count("flash"), s = count("standard");
  set_num_threads(saved);
  const int64_t tc = n / 16, strips = n / 16, nd = n * d;
  // Algorithm 1: D = rowsum(dO * O) reads dO and O; the column blocks read K and V once; every
  // (column block, row block) pair reads Q_i, dO_i, L_i, D_i and reads and writes dQ_i; dK_j, dV_j
  // are written once; the private dQ is added into dQ once (read both, write one).
  EXPECT_EQ(f.read_bytes, 4 * (2 * nd + 2 * nd + tc * (2 * nd + 2 * n) + tc * nd + 2 * nd));
  EXPECT_EQ(f.write_bytes, 4 * (n + tc * nd + 2 * nd + nd));
  // Algorithm 0: D; by row strips dP = dO V^T is written (reading dO_i and all of V), dS = P * (dP - D)
  // reads P and dP and writes dS, dQ = dS K reads dS and K; by column strips dV = P^T dO and
  // dK = dS^T Q read P, dS, dO and Q and write dK, dV.
  EXPECT_EQ(s.read_bytes, 4 * (2 * nd + nd + 2 * strips * nd + 3 * n * n + n + 2 * n * n + 2 * strips * nd));
  EXPECT_EQ(s.write_bytes, 4 * (n + 2 * n * n + nd + 2 * nd));
  // Algorithm 0's backward moves 7 N^2 floats of P, dP and dS; Algorithm 1's has no N^2 term, only
  // Tc (3 N d + 2 N), which is smaller as long as 3 d Tc < 7 N, i.e. M > 12 d^2 / 7.
  EXPECT_GT(s.read_bytes + s.write_bytes, 4 * 7 * n * n);
  EXPECT_LT(f.read_bytes + f.write_bytes, s.read_bytes + s.write_bytes);
}

TEST(Attention, FlashNeverAllocatesNByN) {
  const int64_t n = 1024, d = 16;
  Tensor q = random({1, 1, n, d}, 81).to(DType::Float32), k = random({1, 1, n, d}, 82).to(DType::Float32),
         v = random({1, 1, n, d}, 83).to(DType::Float32), dout = random({1, 1, n, d}, 84).to(DType::Float32);
  auto peak_extra = [&](const std::string& impl) {
    int64_t base = memory_stats().current_bytes;
    reset_peak_memory();
    AttentionOptions o = opts(impl, false, 4096);
    auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention(x[0], x[1], x[2], o)}; },
                              {q, k, v});
    vjp({dout});
    return memory_stats().peak_bytes - base;
  };
  int64_t flash = peak_extra("flash"), flash2 = peak_extra("flash2"), standard = peak_extra("standard");
  EXPECT_LT(flash, n * n * 4 / 4) << "flash peak extra bytes";
  // Flash2's packed Q, K, V, dO and per-thread dQ buffers are O(N d), padded to the micro-kernel's
  // width: less than one N x N matrix of floats.
  EXPECT_LT(flash2, n * n * 4) << "flash2 peak extra bytes";
  EXPECT_GE(standard, 2 * n * n * 4) << "standard keeps P and dS";
}

TEST(Attention, BadInputRaises) {
  Tensor q = random({2, 5, 4}, 91), k = random({2, 5, 4}, 92), v = random({2, 5, 4}, 93);
  EXPECT_EMBER_ERROR(attention(q, k, random({2, 5, 3}, 1)), "k and v must have the same shape");
  EXPECT_EMBER_ERROR(attention(q, random({2, 5, 3}, 1), random({2, 5, 3}, 2)), "head size d");
  EXPECT_EMBER_ERROR(attention(q, random({3, 5, 4}, 1), random({3, 5, 4}, 2)), "leading");
  EXPECT_EMBER_ERROR(attention(random({4}, 1), random({4}, 2), random({4}, 3)), "rank >= 2");
  EXPECT_EMBER_ERROR(attention(q.to(DType::Float32), k, v), "dtypes differ");
  EXPECT_EMBER_ERROR(attention(randint({2, 5, 4}, 0, 3), randint({2, 5, 4}, 0, 3), randint({2, 5, 4}, 0, 3)),
                     "expected float32 or float64");
  EXPECT_EMBER_ERROR(attention(random({2, 6, 4}, 1), k, v, opts("flash", true)), "Nk >= Nq");
  EXPECT_EMBER_ERROR(attention(q, k, v, opts("flash", false, 8)), "block_m");
  EXPECT_EMBER_ERROR(attention(q, k, v, opts("flash", false, -1)), "block_m");
  EXPECT_EMBER_ERROR(parse_attention_impl("fast"), "attention: variant 'fast' is not available on cpu (registered: auto, flash2");
  EXPECT_EMBER_ERROR(parse_attention_impl("fast"), "register_attention_study_kernels()");
  EXPECT_EMBER_ERROR(attention(q, k, v, opts("fast", false)), "variant 'fast' is not available on cpu");
  EXPECT_EMBER_ERROR(attention_forward(q, k, v, opts("fast", false)), "variant 'fast' is not available on cpu");
  // CUDA has its own names, and no study's hint.
  EXPECT_EMBER_ERROR(parse_attention_impl("fast", Device::CUDA), "(registered: auto, standard, flash, flash2)");
  EXPECT_EQ(parse_attention_impl("standard"), "standard");
  EXPECT_EQ(parse_attention_impl("flash2"), "flash2");
  EXPECT_EQ(parse_attention_impl("auto"), "auto");
  EXPECT_EQ(AttentionOptions().impl, "");  // the library's kernel is the default
  AttentionOptions o = opts("flash", false);
  AttentionForward f = attention_forward(q, k, v, o);
  EXPECT_EMBER_ERROR(attention_study::attention_backward_flash(q, k, v, f.out, Tensor(), q, o), "lse");
  EXPECT_EMBER_ERROR(attention_backward(q, k, v, f.out, Tensor(), Tensor(), q, opts("flash2", false)),
                     "lse (the forward's row log-sum-exp) is undefined");
  EXPECT_EMBER_ERROR(attention_study::attention_backward_flash(q, k, v, f.out, f.lse.unsqueeze(-1), q, o), "lse has shape");
  EXPECT_EMBER_ERROR(attention_study::attention_backward_flash(q, k, v, f.out.slice(1, 0, 2), f.lse, q, o), "out has shape");
  EXPECT_EMBER_ERROR(attention_study::attention_backward_standard(q, k, v, f.out, random({2, 5, 4}, 4), q, o),
                     "probs has shape");
  EXPECT_EMBER_ERROR(attention_backward(q, k, v, f.out, f.lse, random({2, 5, 4}, 4), q, opts("standard", false)),
                     "the saved P is");
  EXPECT_EMBER_ERROR(attention_backward(q, k, v, f.out, f.lse, Tensor(), q, opts("fast", false)),
                     "variant 'fast' is not available on cpu");
}

TEST(Attention, RegistrationNamesAndErrors) {
  register_variants();
  register_variants();  // once per process, however often it is called
  ember::testing::register_study_kernels();
  std::vector<std::string> cpu = attention_variants(Device::CPU);
  for (const char* v : {"flash2", "standard", "flash", kTiny})
    EXPECT_EQ(std::count(cpu.begin(), cpu.end(), v), 1) << v;
  EXPECT_EQ(cpu.front(), "flash2");  // the library's, then the registered ones in order
  std::vector<std::string> cuda = attention_variants(Device::CUDA);
  EXPECT_EQ(cuda, (std::vector<std::string>{"standard", "flash", "flash2"}));
  EXPECT_EMBER_ERROR(register_attention_variant("flash2", tiny_kernels()), "attention already has a CPU variant 'flash2'");
  EXPECT_EMBER_ERROR(register_attention_variant("flash", tiny_kernels()), "attention already has a CPU variant 'flash'");
  EXPECT_EMBER_ERROR(register_attention_variant("", tiny_kernels()), "reserved for the library's own kernel");
  EXPECT_EMBER_ERROR(register_attention_variant("auto", tiny_kernels()), "reserved for the library's own kernel");
  AttentionKernels no_backward = tiny_kernels();
  no_backward.backward = nullptr;
  EXPECT_EMBER_ERROR(register_attention_variant("user_half", no_backward), "the backward kernel of 'user_half' is empty");
  EXPECT_EMBER_ERROR(register_attention_variant("user_none", AttentionKernels{}), "the forward kernel of 'user_none' is empty");
  cpu = attention_variants(Device::CPU);
  EXPECT_EQ(std::count(cpu.begin(), cpu.end(), "user_half"), 0);
  EXPECT_EQ(std::count(cpu.begin(), cpu.end(), "user_none"), 0);
}

TEST(Attention, ARecordedCallRunsItsVariantsBackward) {
  // The forward under a ScopedVariant, the backward after the guard is gone: the node keeps the
  // variant's name, so the backward is the registered variant's own kernel, from its own saved L.
  Tensor q = random({2, 7, 5}, 121), k = random({2, 9, 5}, 122), v = random({2, 9, 5}, 123), w = random({2, 7, 5}, 124);
  register_variants();
  for (bool causal : {false, true}) {
    SCOPED_TRACE(str("causal=", causal));
    AttentionOptions o = opts("", causal);
    const int f0 = g_tiny_forwards, b0 = g_tiny_backwards;
    auto [ys, vjp] = [&] {
      ScopedVariant use("attention", kTiny);
      return make_vjp([&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention(x[0], x[1], x[2], o)}; },
                      {q, k, v});
    }();
    EXPECT_EQ(g_tiny_forwards - f0, 1);
    std::vector<Tensor> g = vjp({w});
    EXPECT_EQ(g_tiny_backwards - b0, 1);
    auto [rys, rvjp] = make_vjp(
        [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention_composite(x[0], x[1], x[2], o)}; }, {q, k, v});
    std::vector<Tensor> ref = rvjp({w});
    EXPECT_TRUE(all_close(ys[0], rys[0], 1e-12, 1e-10));
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(all_close(g[i], ref[i], 1e-11, 1e-9)) << "input " << i;
    // By name in the options, the same kernels run.
    AttentionOptions by_name = opts(kTiny, causal);
    const int f1 = g_tiny_forwards;
    EXPECT_TRUE(all_close(attention(q, k, v, by_name), rys[0], 1e-12, 1e-10));
    EXPECT_EQ(g_tiny_forwards - f1, 1);
  }
}

TEST(Attention, FastFloatExpIsAccurate) {
  // The float kernels' exp (ops/attention/cpu/tile_math.h) against std::exp over its domain.
  std::vector<float> x;
  for (int i = 0; i <= 20000; ++i) x.push_back(-100.0f * float(i) / 20000.0f);
  x.push_back(-1e6f);
  std::vector<float> y(x.size());
  cpu::attn::exp_shifted<float>(x.data(), y.data(), int64_t(x.size()), 0.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    double ref = std::exp(double(x[i]));
    if (x[i] >= -87.0f) ASSERT_NEAR(y[i], ref, 4e-7 * ref) << "x = " << x[i];
    else ASSERT_LE(y[i], 2e-38f) << "x = " << x[i];
  }
  float shifted;
  float one = 3.0f;
  cpu::attn::exp_shifted<float>(&one, &shifted, 1, 3.0f);
  EXPECT_FLOAT_EQ(shifted, 1.0f);
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

TEST(Attention, Flash2LazyMaxHoldsWhereScoresClimbAndJump) {
  // The float kernels move a query's running max only when a block's scores exceed it by more than
  // ln 256 (flash2_rows.h). Scores that climb by about 3 per block of 132 keys move it on some
  // blocks and not on others; a jump of 100 in the fourth block moves it at once, where exp(s - m)
  // with the stale max would overflow. Both against the float64 composite, forward and gradients.
  for (float jump : {0.0f, 100.0f})
    for (bool causal : {false, true}) {
      SCOPED_TRACE(str("jump=", jump, " causal=", causal));
      const int64_t n = 700, d = 16;
      std::vector<float> qv = random({n, d}, 901).to_vector<float>(), kv = random({n, d}, 902).to_vector<float>();
      for (int64_t i = 0; i < n; ++i) qv[size_t(i * d)] = 4.0f;  // every query sees the ramp in column 0
      for (int64_t j = 0; j < n; ++j) kv[size_t(j * d)] = 0.006f * float(j) + (j >= 3 * 132 ? jump / 4 : 0.0f);
      Tensor q = from_vector(qv, {n, d}), k = from_vector(kv, {n, d}), v = random({n, d}, 903), w = random({n, d}, 904);
      AttentionOptions o = opts("flash2", causal);
      o.scale = 1.0;
      auto run = [&](bool composite, DType dt) {
        auto [ys, vjp] = make_vjp(
            [&](const std::vector<Tensor>& x) {
              return std::vector<Tensor>{composite ? attention_composite(x[0], x[1], x[2], o) : attention(x[0], x[1], x[2], o)};
            },
            {q.to(dt), k.to(dt), v.to(dt)});
        std::vector<Tensor> g = vjp({w.to(dt)});
        g.insert(g.begin(), ys[0]);
        return g;
      };
      const std::vector<Tensor> ref = run(true, DType::Float64), f32 = run(false, DType::Float32);
      for (int i = 0; i < 4; ++i) EXPECT_TRUE(all_close(f32[i], ref[i], 1e-4, 1e-3)) << "output " << i;
      for (float x : f32[0].to_vector<float>()) ASSERT_TRUE(std::isfinite(x));
    }
}

TEST(Attention, Flash2MatchesTheCompositeOnAwkwardShapes) {
  // The production kernel's blocks (up to 128 queries x 128 keys forward, one NR-key sliver x 96
  // queries backward, head dims padded to the micro-kernel's MR), on every instruction set the CPU has, against the composite float64
  // formula: N off every block multiple and past two blocks (300), d = 64, 128 and odd, causal and
  // not, Nq < Nk, forward and all three gradients. Up to 512 keys the float forward reads K where it
  // lies, beyond that from packed slivers (kKeysInPlace in flash2.cpp): 530 keys take the second.
  struct S {
    Shape q, kv;
  };
  uint64_t seed = 500;
  for (S c : {S{{1, 1, 130, 64}, {1, 1, 130, 64}}, S{{2, 97, 128}, {2, 97, 128}}, S{{1, 2, 300, 7}, {1, 2, 300, 7}},
              S{{40, 33}, {290, 33}}, S{{5, 64}, {200, 64}}, S{{1, 200, 1}, {1, 200, 1}}, S{{70, 64}, {530, 64}}})
    for (bool causal : {false, true}) {
      SCOPED_TRACE(str("q", to_string(c.q), " kv", to_string(c.kv), " causal=", causal));
      Tensor q = random(c.q, seed++), k = random(c.kv, seed++), v = random(c.kv, seed++), w = random(c.q, seed++);
      auto run = [&](bool composite, DType dt, const std::string& impl) {
        AttentionOptions o = opts(impl, causal);
        auto [ys, vjp] = make_vjp(
            [&](const std::vector<Tensor>& x) {
              return std::vector<Tensor>{composite ? attention_composite(x[0], x[1], x[2], o) : attention(x[0], x[1], x[2], o)};
            },
            {q.to(dt), k.to(dt), v.to(dt)});
        std::vector<Tensor> g = vjp({w.to(dt)});
        g.insert(g.begin(), ys[0]);
        return g;
      };
      const std::vector<Tensor> ref = run(true, DType::Float64, "flash2");
      std::vector<std::string> names = flash2_isa_names();
      names.insert(names.begin(), "flash2");
      for (const std::string& impl : names) {
        std::vector<Tensor> f64 = run(false, DType::Float64, impl), f32 = run(false, DType::Float32, impl);
        for (int i = 0; i < 4; ++i) {
          EXPECT_TRUE(all_close(f64[i], ref[i], 1e-11, 1e-9)) << impl << " float64 output " << i;
          EXPECT_TRUE(all_close(f32[i], ref[i], 1e-4, 1e-3)) << impl << " float32 output " << i;
        }
      }
    }
}

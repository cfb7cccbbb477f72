// The library's CPU kernel (ops/attention/cpu/: flash2.cpp, decode.cpp, rowdot.cpp, tile_math.h):
// few query rows against keys in place, the decode path and its key block, the fast exp, the lazy
// maximum where scores climb and jump, and awkward shapes against the composite.
#include <cmath>

#include "ops/attention/attention_test_util.h"
#include "ops/attention/cpu/tile_math.h"

using namespace ember;
using namespace ember::testing;
using namespace attention_test;

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

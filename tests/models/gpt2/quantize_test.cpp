// GPT2::quantize: a random-weight GPT-2 with int8 or bf16 weights against its float32 self.
#include <cmath>

#include "models/gpt2/generate.h"
#include "models/gpt2/gpt2_fixtures.h"
#include "models/gpt2/model.h"
#include "test_util.h"

using namespace ember;
using namespace ember::gpt2;
using quant::WeightFormat;

namespace {

// Widths that are not multiples of 32 (the tail rule) and a vocabulary of odd size.
Config small_config() {
  Config c;
  c.n_layer = 3;
  c.n_head = 3;
  c.n_embd = 48;
  c.vocab_size = 301;
  c.n_positions = 40;
  return c;
}

Tensor ids(int64_t t, int64_t vocab, uint64_t seed) {
  Generator g(seed);
  return randint({1, t}, 0, vocab, &g);
}

// max |a - b| over max |b|.
double rel_max_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double d = 0, m = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    d = std::max(d, std::fabs(x[i] - y[i]));
    m = std::max(m, std::fabs(y[i]));
  }
  return d / m;
}

}  // namespace

TEST(Gpt2Quantize, LogitsStayCloseToFloat32) {
  // Bound: the largest logit error is within 1.5% (int8) or 0.5% (bf16) of the largest logit (measured
  // 0.48% and 0.14% on this model), over a 20-token forward (the tiles kernel) and over decode steps
  // with the cache (the few-rows kernel).
  for (WeightFormat f : {WeightFormat::Int8Block32, WeightFormat::BFloat16}) {
    GPT2 ref(small_config(), 7), q(small_config(), 7);
    q.quantize(f);
    EXPECT_EQ(q.weight_format(), f);
    autograd::NoGradGuard ng;
    Tensor x = ids(20, 301, 1);
    Tensor want = ref.forward(x), got = q.forward(x);
    const double bound = f == WeightFormat::Int8Block32 ? 0.015 : 0.005;
    const double d = rel_max_diff(got, want);
    EXPECT_LT(d, bound) << quant::format_name(f);
    EXPECT_GT(d, 0.0) << "the quantised model must not be reading the float32 weights";
    // One token at a time through the cache (the decode kernels: for int8, x is quantised per
    // block too): within the same bound of float32; bf16's equal the full forward's to rounding.
    KVCache cache(q.config(), 1);
    for (int64_t t = 0; t < 20; ++t) {
      Tensor step = q.forward(x.slice(1, t, t + 1), &cache);
      EXPECT_LT(rel_max_diff(step, want.slice(1, t, t + 1)), bound) << quant::format_name(f) << " t " << t;
      if (f == WeightFormat::BFloat16)
        EXPECT_TRUE(ember::testing::all_close(step, got.slice(1, t, t + 1), 1e-4, 1e-3)) << " t " << t;
    }
  }
}

TEST(Gpt2Quantize, GreedyGenerationRunsAndMatchesTheNoCachePath) {
  GPT2 q(small_config(), 3);
  q.quantize(WeightFormat::Int8Block32);
  SamplingOptions s;
  s.max_new_tokens = 12;
  std::vector<int64_t> prompt = {5, 17, 299, 0};
  std::vector<int64_t> a = generate(q, prompt, s);
  s.use_cache = false;
  std::vector<int64_t> b = generate(q, prompt, s);
  ASSERT_EQ(a.size(), 12u);
  EXPECT_EQ(a, b);
}

TEST(Gpt2Quantize, DecodeBytesShrink) {
  GPT2 f(small_config(), 1), b(small_config(), 1), i(small_config(), 1);
  b.quantize(WeightFormat::BFloat16);
  i.quantize(WeightFormat::Int8Block32);
  const int64_t fb = f.decode_weight_bytes();
  EXPECT_EQ(fb, f.num_parameters() * 4);
  // Linear weights and the LM head: 48 inputs pad to 64 (bf16: 64 x 2 bytes per row of 48 weights).
  EXPECT_LT(b.decode_weight_bytes(), fb * 0.75);
  EXPECT_LT(i.decode_weight_bytes(), fb * 0.45);
}

TEST(Gpt2Quantize, WorksWithoutNoGradInEvalMode) {
  GPT2 q(gpt2::testing::tiny_config(), 2);
  q.quantize(WeightFormat::BFloat16);
  Tensor y = q.forward(ids(5, 37, 2));  // grad enabled, parameters requiring grad: nothing is recorded
  EXPECT_FALSE(y.is_traced());
  EXPECT_EQ(y.shape(), (Shape{1, 5, 37}));
}

TEST(Gpt2Quantize, RefusesTrainingAndSecondQuantisation) {
  GPT2 q(gpt2::testing::tiny_config(), 2);
  q.quantize(WeightFormat::Float32);  // a float32 model stays as it is
  EXPECT_EQ(q.weight_format(), WeightFormat::Float32);
  q.quantize(WeightFormat::Int8Block32);
  EXPECT_FALSE(q.is_training());
  EXPECT_EMBER_ERROR(q.quantize(WeightFormat::BFloat16), "already quantised to int8");
  EXPECT_EMBER_ERROR(q.quantize(WeightFormat::Int8Block32), "already quantised");
  EXPECT_EMBER_ERROR(q.quantize(WeightFormat::Float32), "already quantised");
  q.train();
  EXPECT_EMBER_ERROR(lm_loss(q.forward(ids(5, 37, 3)), ids(5, 37, 3)), "cannot be trained");
  autograd::NoGradGuard ng;
  EXPECT_NO_THROW(q.forward(ids(5, 37, 3)));  // training mode under no_grad is still inference
}

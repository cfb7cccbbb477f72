#include "examples/gpt2/step_ceiling.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "tests/models/gpt2/gpt2_fixtures.h"

using namespace ember;
using namespace ember::gpt2;
using ember::gpt2::testing::tiny_config;

// A linear layer's three products cost 6 x rows x its weights' size; causal attention's seven
// products per head (two forward, five backward) half of 2 T T hd each.
TEST(StepCeiling, ProductsAddUpToTheStepsFlops) {
  const Config c = tiny_config();
  const int64_t B = 5, T = 24, rows = B * T, C = c.n_embd;
  double linear = 0, attention = 0;
  for (const StepGemm& g : step_gemms(c, B, T)) {
    EXPECT_GT(g.count, 0) << g.what;
    (g.batch > 1 ? attention : linear) += g.flops();
  }
  const double weights = double(c.n_layer) * 12.0 * double(C * C) + double(c.vocab_size * C);
  EXPECT_DOUBLE_EQ(linear, 6.0 * double(rows) * weights);
  EXPECT_DOUBLE_EQ(attention, double(c.n_layer * B * c.n_head) * 0.5 * 7.0 * 2.0 * double(T * T * c.head_dim()));
}

TEST(StepCeiling, TimesEveryProduct) {
  std::vector<StepGemm> g = step_gemms(tiny_config(), 2, 16);
  time_gemms(g, 3);
  for (const StepGemm& s : g) EXPECT_GT(s.ms, 0) << s.what;
  EXPECT_THROW(time_gemms(g, 0), ember::Error);
}

// The other work's bytes: the optimizer's passes over the parameters, plus activations that grow
// linearly with the batch.
TEST(StepCeiling, OtherBytesGrowLinearlyWithTheBatch) {
  const Config c = tiny_config();
  const double b1 = step_other_bytes(c, 1, 16), b2 = step_other_bytes(c, 2, 16), b3 = step_other_bytes(c, 3, 16);
  EXPECT_GT(b2, b1);
  EXPECT_NEAR(b3 - b2, b2 - b1, 1e-6 * b3);
  const double C = double(c.n_embd);
  const double params = double(c.n_layer) * (12.0 * C * C + 13.0 * C) + double(c.vocab_size) * C + 16.0 * C + 2.0 * C;
  EXPECT_GT(b1, 8.0 * 4.0 * params);
}

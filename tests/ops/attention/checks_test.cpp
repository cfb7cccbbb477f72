// attention's checks and block sizes (ops/attention/checks.cpp): the paper's block sizes, and bad
// input of every kind raising an ember::Error that says what is wrong.
#include "ops/attention/attention_test_util.h"

using namespace ember;
using namespace ember::testing;
using namespace attention_test;

TEST(Attention, BlockSizesFollowThePaper) {
  AttentionBlocks b = attention_blocks(64, 65536);
  EXPECT_EQ(b.bc, 256);  // ceil(M / 4d)
  EXPECT_EQ(b.br, 64);   // min(ceil(M / 4d), d)
  b = attention_blocks(8, 100);
  EXPECT_EQ(b.bc, 4);  // ceil(100 / 32)
  EXPECT_EQ(b.br, 4);
  EXPECT_GT(default_attention_block_m(), 0);
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

// attention's variants (ops/attention/variants.cpp and the op table): registration, names and
// errors, the backward of a recorded call running its variant's kernels, and an option naming a
// variant inside a ScopedVariant of another.
#include <algorithm>

#include "ops/attention/attention_test_util.h"
#include "ops/op_list.h"

using namespace ember;
using namespace ember::testing;
using namespace attention_test;

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

TEST(Attention, AnOptionNamingAVariantWinsOverAnEnclosingScope) {
  Tensor q = random({2, 7, 5}, 131), k = random({2, 9, 5}, 132), v = random({2, 9, 5}, 133), w = random({2, 7, 5}, 134);
  register_variants();
  ScopedVariant outer("attention", "standard");
  const int f0 = g_tiny_forwards, b0 = g_tiny_backwards;
  AttentionOptions by_name = opts(kTiny, false);
  auto [ys, vjp] = make_vjp(
      [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention(x[0], x[1], x[2], by_name)}; }, {q, k, v});
  vjp({w});
  EXPECT_EQ(g_tiny_forwards - f0, 1);
  EXPECT_EQ(g_tiny_backwards - b0, 1);  // the option's variant's backward kernel, not the scope's
  Tensor ref = attention_composite(q, k, v, by_name);
  EXPECT_TRUE(all_close(ys[0], ref, 1e-12, 1e-10));
  // Without an option the enclosing scope chooses; an inner scope wins over it.
  const int f1 = g_tiny_forwards;
  EXPECT_TRUE(all_close(attention(q, k, v, opts("", false)), ref, 1e-12, 1e-10));
  EXPECT_EQ(g_tiny_forwards - f1, 0);
  {
    ScopedVariant inner("attention", kTiny);
    EXPECT_TRUE(all_close(attention(q, k, v, opts("", false)), ref, 1e-12, 1e-10));
    EXPECT_EQ(g_tiny_forwards - f1, 1);
  }
}

// The op table's variants (framework/core/autograd/op_table.h, ScopedVariant in ops/op_list.h):
// registering a variant while another thread dispatches the primitive, the one error for an
// unknown name, ScopedVariant nesting, and an option naming a variant inside a scope of another.
#include <atomic>
#include <string>
#include <thread>

#include "ember.h"
#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

// A primitive whose kernels say which of them ran: the default returns -1, variant "v<i>" i.
KernelOut default_kernel(const Args& x, const NoAttrs&) { return full({1}, -1.0, x[0].dtype()); }
Primitive<>::Kernel numbered_kernel(int i) {
  return [i](const Args& x, const NoAttrs&) { return KernelOut(full({1}, double(i), x[0].dtype())); };
}
std::string numbered(int i) { return "v" + std::to_string(i); }

Primitive<> numbered_op(const std::string& name) { return Primitive<>(name, /*builtin=*/false).cpu(default_kernel); }

double run(const Primitive<>& p) { return p({zeros({1})}).item(); }

// Registers `count` variants on this thread while another dispatches them, each time a variant
// picked from those registered so far; every few registrations the writer waits for the reader to
// have dispatched, so that the two interleave however the threads are scheduled.
struct RaceResult {
  int dispatched = 0, wrong = 0;
};
RaceResult register_while_dispatching(Primitive<>& p, int count) {
  std::atomic<int> registered{0}, dispatched{0}, wrong{0};
  std::thread reader([&] {
    uint64_t state = 12345;
    for (int n = registered.load(); n < count; n = registered.load()) {
      if (n == 0) continue;
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const int pick = int((state >> 33) % uint64_t(n));
      ScopedVariant use(p.info(), numbered(pick));
      wrong += run(p) != double(pick);
      wrong += !p.info().has_variant(Device::CPU, numbered(pick));
      ++dispatched;
    }
  });
  for (int i = 0; i < count; ++i) {
    p.variant(Device::CPU, numbered(i), numbered_kernel(i));
    registered.store(i + 1);
    if (i % 8 == 7)
      while (dispatched.load() < i / 8 && registered.load() < count) std::this_thread::yield();
  }
  reader.join();
  return {dispatched.load(), wrong.load()};
}

}  // namespace

TEST(OpTableVariants, RegisteringWhileAnotherThreadDispatchesIsSafe) {
  Primitive<> p = numbered_op("test_variant_race");
  // Thousands of registrations: the variant list reallocates many times while the reader looks
  // names and kernels up in it, which without the table's lock reads freed memory.
  RaceResult r = register_while_dispatching(p, 3000);
  EXPECT_EQ(r.wrong, 0);
  EXPECT_GE(r.dispatched, 3000 / 8 - 2);  // at least once per eight registrations
  EXPECT_EQ(p.info().variants(Device::CPU).size(), 3000u);
  EXPECT_EQ(run(p), -1.0);  // no scope: the default kernel
}

TEST(OpTableVariants, AnUnknownNameIsOneErrorListingTheRegisteredOnes) {
  Primitive<> p = numbered_op("test_variant_names");
  p.variant(Device::CPU, "fast", numbered_kernel(1)).variant(Device::CPU, "small", numbered_kernel(2));
  p.variant(Device::CUDA, "tiled", numbered_kernel(3));
  EXPECT_EQ(parse_variant(p.info(), "fast", Device::CPU), "fast");
  EXPECT_EQ(parse_variant(p.info(), "auto", Device::CPU), "auto");
  EXPECT_EQ(parse_variant(p.info(), "", Device::CUDA), "");
  EXPECT_EMBER_ERROR(parse_variant(p.info(), "tiled", Device::CPU),
                     "custom op 'test_variant_names': variant 'tiled' is not available on cpu (registered: auto, fast, small)");
  EXPECT_EMBER_ERROR(parse_variant(p.info(), "nope", Device::CUDA, "; a hint"),
                     "variant 'nope' is not available on cuda (registered: auto, tiled); a hint");
  EXPECT_EQ(parse_variant_any_device(p.info(), "tiled"), "tiled");
  EXPECT_EMBER_ERROR(parse_variant_any_device(p.info(), "nope"),
                     "variant 'nope' is not available on any device (registered: auto, fast (cpu), small (cpu), tiled (cuda))");
  EXPECT_EMBER_ERROR(p.variant(Device::CPU, "fast", numbered_kernel(4)), "already has a CPU variant 'fast'");
  EXPECT_EMBER_ERROR(p.variant(Device::CPU, "auto", numbered_kernel(4)), "reserved for the library's own kernel");
  EXPECT_EMBER_ERROR(p.variant(Device::CPU, "empty", Primitive<>::Kernel()), "the kernel of variant 'empty' is empty");
  EXPECT_EQ(p.info().variants(Device::CPU), (std::vector<std::string>{"fast", "small"}));
  // matmul's and attention's parse functions are the same check with a hint of their own.
  EXPECT_EMBER_ERROR(parse_matmul_impl("nope"), "matmul: variant 'nope' is not available on cpu (registered: auto, packed");
  EXPECT_EMBER_ERROR(ScopedVariant("matmul", "nope"), "matmul: variant 'nope' is not available on any device");
}

TEST(OpTableVariants, TheInnermostScopedVariantWins) {
  Primitive<> p = numbered_op("test_variant_nesting");
  for (int i = 0; i < 3; ++i) p.variant(Device::CPU, numbered(i), numbered_kernel(i));
  p.variant(Device::CUDA, "gpu_only", numbered_kernel(9));
  EXPECT_EQ(run(p), -1.0);
  {
    ScopedVariant outer(p.info(), "v1");
    EXPECT_EQ(run(p), 1.0);
    {
      ScopedVariant inner(p.info(), "v2");
      EXPECT_EQ(run(p), 2.0);
      ASSERT_NE(scoped_variant(p.info(), Device::CPU), nullptr);
      EXPECT_EQ(*scoped_variant(p.info(), Device::CPU), "v2");
      {
        ScopedVariant reset(p.info(), "auto");  // the default hides the outer scopes
        EXPECT_EQ(run(p), -1.0);
        EXPECT_EQ(scoped_variant(p.info(), Device::CPU), nullptr);
      }
      {
        ScopedVariant other(p.info(), "gpu_only");  // not on the CPU: the default kernel there
        EXPECT_EQ(run(p), -1.0);
      }
      EXPECT_EQ(run(p), 2.0);
    }
    EXPECT_EQ(run(p), 1.0);
  }
  EXPECT_EQ(run(p), -1.0);
  EXPECT_EQ(scoped_variant(p.info(), Device::CPU), nullptr);
}

namespace {
// Two counting matmul variants that compute the product with the library's kernel.
std::atomic<int> g_calls_a{0}, g_calls_b{0};
void register_counting_matmuls() {
  static const bool done = [] {
    register_matmul_variant("optable_count_a", [](const GemmArgs& g) {
      ++g_calls_a;
      cpu_gemm(g, MatmulOptions{});
    });
    register_matmul_variant("optable_count_b", [](const GemmArgs& g) {
      ++g_calls_b;
      cpu_gemm(g, MatmulOptions{});
    });
    return true;
  }();
  (void)done;
}
}  // namespace

TEST(OpTableVariants, AnOptionNamingAVariantWinsOverAnEnclosingScope) {
  register_counting_matmuls();
  Tensor a = random({4, 3}, 1), b = random({3, 5}, 2), w = random({4, 5}, 3);
  Tensor ref = matmul(a, b);
  MatmulOptions use_b;
  use_b.impl = "optable_count_b";
  ScopedVariant outer("matmul", "optable_count_a");
  const int a0 = g_calls_a, b0 = g_calls_b;
  EXPECT_TRUE(all_close(matmul(a, b, use_b), ref, 1e-12, 1e-12));
  EXPECT_EQ(g_calls_b - b0, 1);
  EXPECT_EQ(g_calls_a - a0, 0);
  EXPECT_TRUE(all_close(matmul(a, b), ref, 1e-12, 1e-12));  // no option: the scope's variant
  EXPECT_EQ(g_calls_a - a0, 1);
  // The backward products of the option's call run the option's variant too.
  auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& x) { return std::vector<Tensor>{matmul(x[0], x[1], use_b)}; },
                            {a, b});
  const int a1 = g_calls_a, b1 = g_calls_b;
  vjp({w});
  EXPECT_EQ(g_calls_b - b1, 2);
  EXPECT_EQ(g_calls_a - a1, 0);
}

// The packed GEMM's cache model (ops/matmul/cpu/cache_model.cpp): the L2 set model that decides
// which rows a stride apart keep a block in the L2, the streamed-B threshold from the L3, the
// stripes' depth, and which products the general path reads A in place for.
#include <unistd.h>

#include "framework/core/storage.h"
#include "ops/matmul/cpu/kernels.h"
#include "ops/matmul/cpu/packed_internal.h"
#include "test_util.h"

namespace ember {
namespace {

namespace pg = cpu::packed_gemm;

// A block larger than the L2 never fits it, wherever its rows lie; a small block of contiguous
// rows always does, on pages of either size.
TEST(PackedCacheModel, ABlockFitsTheL2OnlyIfItIsSmallerThanTheL2) {
  const int64_t l2 = pg::l2_bytes();
  for (bool huge : {true, false}) {
    EXPECT_FALSE(pg::rows_fit_l2(l2 / 512, 1024, l2 / 512, huge)) << huge;
    EXPECT_FALSE(pg::rows_fit_l2(4096, 1024, l2 / 512, huge)) << huge;
    if (l2 >= (int64_t(256) << 10)) {
      EXPECT_TRUE(pg::rows_fit_l2(1024, 16, 1024, huge)) << huge;
    }
  }
}

// Rows a whole L2 apart all land on the same set, so one line of each fits only as many rows as
// the L2 has ways (on huge pages, where the placement is exact). A block that fits where pages may
// be 4 KiB also fits on huge pages (the rule for 4 KiB pages only adds a condition).
TEST(PackedCacheModel, RowsOnOneSetFitAsManyAsTheWays) {
  const long assoc = sysconf(_SC_LEVEL2_CACHE_ASSOC);
  const int64_t l2 = pg::l2_bytes();
  if (assoc > 0 && l2 % assoc == 0 && l2 / assoc >= 64) {
    EXPECT_TRUE(pg::rows_fit_l2(l2, assoc, 64, true));
    EXPECT_FALSE(pg::rows_fit_l2(l2, assoc + 1, 64, true));
  }
  for (int64_t stride : {256, 2400, 4096, 8192, 9216, 12288, 32768})
    for (int64_t rows : {48, 96, 192, 384})
      if (pg::rows_fit_l2(stride, rows, 2048, false)) {
        EXPECT_TRUE(pg::rows_fit_l2(stride, rows, 2048, true)) << stride << " x " << rows;
      }
}

TEST(MatmulVariantsStreamedB, ThresholdDefaultsFromTheCacheAndRejectsNegatives) {
  const int64_t def = cpu::streamed_b_bytes();
  EXPECT_GT(def, 0);
  EXPECT_LE(def, int64_t(64) << 20);
  cpu::set_streamed_b_bytes(12345);
  EXPECT_EQ(cpu::streamed_b_bytes(), 12345);
  cpu::set_streamed_b_bytes(0);
  EXPECT_EQ(cpu::streamed_b_bytes(), def);
  EXPECT_EMBER_ERROR(cpu::set_streamed_b_bytes(-1), "must be >= 0 bytes (0: the default), got -1");
}

// The depth of the AVX-512 stripes (rows of B per kc block) by B's row stride and by what Ember knows
// of its pages: a B from allocate_host (huge pages where THP is on) against a B from malloc (4 KiB
// pages, or huge ones where THP is "always": either). Rows 12 KiB apart take 384 rows on huge pages
// and 192 where pages may be 4 KiB; 2304 and 768 columns take 384 and 2048 192 wherever B lies,
// 4096 96 and 8192 48 (their rows fold onto fewer sets). Where the depth is short for the rows
// (more than two thirds of it) and k needs several blocks, the product takes the copying path (0):
// 128 rows at 4096 columns, 64 at 8192, any at 16384 (not even 48 rows fit), but not 128 rows
// whose k is one block. Those depths are checked on a 2 MiB, 16-way L2 (the Xeon's); elsewhere only
// that a foreign B never takes more rows than Ember's.
TEST(MatmulVariantsStripes, DepthFollowsTheRowStrideWhatIsKnownOfThePagesAndTheRows) {
  if (cpu::best_cpu_isa() < cpu::CpuIsa::Avx512) GTEST_SKIP() << "the stripes are AVX-512's; this CPU has none";
  const size_t elems = size_t(768) * 16384;
  void* ember_b = allocate_host(elems * sizeof(float));
  std::vector<float> foreign_b(elems);
  auto args = [&](int64_t m, int64_t k, int64_t n, const void* b) {
    return GemmArgs{m, n, k, nullptr, k, 1, b, n, 1, nullptr, n, DType::Float32};
  };
  const bool exact = sysconf(_SC_LEVEL2_CACHE_SIZE) == (2 << 20) && sysconf(_SC_LEVEL2_CACHE_ASSOC) == 16;
  const bool huge = on_huge_pages(ember_b, elems * sizeof(float));
  struct Case {
    int64_t m, k, n, on_huge, elsewhere;
  };
  const std::vector<Case> cases = {{64, 768, 768, 384, 384},  {64, 768, 2304, 384, 384}, {64, 768, 3072, 384, 192},
                                   {64, 768, 2048, 192, 192}, {64, 768, 4096, 96, 96},   {128, 768, 4096, 0, 0},
                                   {128, 96, 4096, 96, 96},   {32, 768, 8192, 48, 48},   {16, 768, 8192, 48, 48},
                                   {64, 768, 8192, 0, 0},     {64, 768, 16384, 0, 0},   {2, 768, 2304, 384, 384},
                                   {3, 768, 3072, 384, 192}};
  for (const Case& c : cases) {
    const int64_t kc_ember = cpu::stripe_kc(args(c.m, c.k, c.n, ember_b), cpu::CpuIsa::Avx512);
    const int64_t kc_foreign = cpu::stripe_kc(args(c.m, c.k, c.n, foreign_b.data()), cpu::CpuIsa::Avx512);
    const std::string what = str(c.m, "x", c.k, "x", c.n);
    EXPECT_LE(kc_foreign, kc_ember) << what;
    if (exact) {
      EXPECT_EQ(kc_ember, huge ? c.on_huge : c.elsewhere) << what;
      EXPECT_EQ(kc_foreign, c.elsewhere) << what;
    }
  }
  // Not the stripes: more rows than the few-rows path, float64, a transposed A, another ISA; and
  // two rows, which take skinny() where the stripes do not (float64, a transposed B).
  auto kc_with = [&](int64_t m, auto edit) {
    GemmArgs g = args(m, 768, 3072, ember_b);
    edit(g);
    return cpu::stripe_kc(g, cpu::CpuIsa::Avx512);
  };
  EXPECT_EQ(cpu::stripe_kc(args(300, 768, 3072, ember_b), cpu::CpuIsa::Avx512), 0);
  EXPECT_EQ(cpu::stripe_kc(args(64, 768, 3072, ember_b), cpu::CpuIsa::Avx2), 0);
  for (int64_t m : {64, 2}) {
    EXPECT_EQ(kc_with(m, [](GemmArgs& g) { g.dtype = DType::Float64; }), 0) << m << " rows";
    EXPECT_EQ(kc_with(m, [](GemmArgs& g) { g.a_rs = 1, g.a_cs = g.m; }), 0) << m << " rows";
    EXPECT_EQ(kc_with(m, [](GemmArgs& g) { g.b_rs = 1, g.b_cs = g.k; }), 0) << m << " rows";
  }
  free_host(ember_b);
}

// Which products read A in place: never float64, a transposed A, few rows, or rows 32 KiB apart
// (a block of them folds onto a few of the L2's sets, even at the floor of rows that
// general_blocks allows); float32 rows 2400 bytes apart do
// wherever the L2 holds a block of A (1 MiB or more: every x86 server core of the last years), and
// rows 8 KiB apart too, in blocks of fewer rows.
TEST(MatmulVariantsRowsOfA, TheRuleFollowsTheRowStrideAndTheL2) {
  auto args = [](int64_t m, int64_t k, int64_t n, int64_t a_rs, int64_t a_cs, DType dt) {
    return GemmArgs{m, n, k, nullptr, a_rs, a_cs, nullptr, n, 1, nullptr, n, dt};
  };
  for (int isa = 0; isa <= int(cpu::best_cpu_isa()); ++isa) {
    const cpu::CpuIsa i = cpu::CpuIsa(isa);
    EXPECT_FALSE(cpu::reads_a_in_place(args(400, 600, 200, 600, 1, DType::Float64), i)) << name(i);
    EXPECT_FALSE(cpu::reads_a_in_place(args(400, 600, 200, 1, 400, DType::Float32), i)) << name(i);
    EXPECT_FALSE(cpu::reads_a_in_place(args(64, 600, 200, 600, 1, DType::Float32), i)) << name(i);
    EXPECT_FALSE(cpu::reads_a_in_place(args(1000, 600, 200, 8192, 1, DType::Float32), i)) << name(i);
    if (i == cpu::CpuIsa::Portable) EXPECT_FALSE(cpu::reads_a_in_place(args(400, 600, 200, 600, 1, DType::Float32), i));
    else if (sysconf(_SC_LEVEL2_CACHE_SIZE) >= (1 << 20)) {
      EXPECT_TRUE(cpu::reads_a_in_place(args(400, 600, 200, 600, 1, DType::Float32), i)) << name(i);
      EXPECT_TRUE(cpu::reads_a_in_place(args(1000, 600, 200, 2048, 1, DType::Float32), i)) << name(i);
    }
  }
}

}  // namespace
}  // namespace ember

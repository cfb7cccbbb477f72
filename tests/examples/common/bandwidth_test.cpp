// The shared bandwidth probe (examples/common/bandwidth.h): it measures something positive and
// finite for both kernels and both team sizes, reports it consistently, and refuses arrays that
// would be measured from the caches. (How fast the memory is is not a test's business.)
#include "examples/common/bandwidth.h"

#include <cmath>
#include <vector>

#include "test_util.h"

using namespace ember;

TEST(Bandwidth, MeasuresBothKernelsAtBothTeamSizes) {
  bench::Bandwidth bw = bench::measure_bandwidth(size_t(4) << 20, 2, 2);
  EXPECT_EQ(bw.bytes_per_array, size_t(4) << 20);
  EXPECT_EQ(bw.threads, 2);
  for (double g : {bw.copy_gbs_1t, bw.copy_gbs_nt, bw.read_gbs_1t, bw.read_gbs_nt}) {
    EXPECT_TRUE(std::isfinite(g));
    EXPECT_GT(g, 0.01);   // a few MiB in well under a minute
    EXPECT_LT(g, 1e5);    // and not faster than light: a timing of ~0 would show here
  }
  EXPECT_EQ(bw.copy_gbs(), std::max(bw.copy_gbs_1t, bw.copy_gbs_nt));
  EXPECT_EQ(bw.read_gbs(), std::max(bw.read_gbs_1t, bw.read_gbs_nt));
  std::string text = bench::describe(bw);
  EXPECT_NE(text.find("4 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("read"), std::string::npos) << text;
  nlohmann::json j = bench::to_json(bw);
  EXPECT_DOUBLE_EQ(j["copy_gbs"].get<double>(), bw.copy_gbs());
  EXPECT_DOUBLE_EQ(j["read_gbs_nt"].get<double>(), bw.read_gbs_nt);
}

TEST(Bandwidth, OneThreadIsOneTeamSize) {
  // With one thread the team figures are the one-thread ones, and the text names no second team
  // (it once printed "0.0 at 1").
  bench::Bandwidth bw = bench::measure_bandwidth(size_t(4) << 20, 1, 2);
  EXPECT_GT(bw.read_gbs_1t, 0.01);
  EXPECT_EQ(bw.read_gbs_nt, bw.read_gbs_1t);
  EXPECT_EQ(bw.copy_gbs_nt, bw.copy_gbs_1t);
  std::string text = bench::describe(bw);
  EXPECT_NE(text.find("1 thread"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.0 at"), std::string::npos) << text;
  EXPECT_EQ(text.find(" at 1"), std::string::npos) << text;
}

TEST(Bandwidth, EveryStreamPatternSumsEveryElement) {
  // The read kernel's sum must touch each element once, whatever the split (remainders included).
  std::vector<float> x(1000 + 37);
  double want = 0;
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 13) - 6.5f, want += double(x[i]);
  for (int streams : {1, 2, 8, 9})
    for (int64_t len : {int64_t(0), int64_t(5), int64_t(255), int64_t(256), int64_t(x.size())}) {
      double ref = 0;
      for (int64_t i = 0; i < len; ++i) ref += double(x[size_t(i)]);
      EXPECT_NEAR(bench::detail::sum_streams(x.data(), len, streams), ref, 1e-3) << streams << " streams, " << len;
    }
  EXPECT_NEAR(bench::detail::sum_streams(x.data(), int64_t(x.size()), 8), want, 1e-3);
}

TEST(Bandwidth, PercentOfTheMeasuredFigure) {
  bench::Bandwidth bw;
  bw.copy_gbs_1t = 10, bw.copy_gbs_nt = 20, bw.read_gbs_1t = 15, bw.read_gbs_nt = 12;
  EXPECT_DOUBLE_EQ(bench::percent_of_copy(10e9, 1.0, bw), 50.0);   // 10 GB/s of 20
  EXPECT_DOUBLE_EQ(bench::percent_of_read(3e9, 0.5, bw), 40.0);    // 6 GB/s of 15
  EXPECT_DOUBLE_EQ(bench::percent_of(1e9, 0.0, 10), 0.0);          // no time: no claim
  EXPECT_DOUBLE_EQ(bench::percent_of(1e9, 1.0, 0), 0.0);           // no figure: no claim
}

TEST(Bandwidth, RejectsCacheSizedArraysAndBadCounts) {
  EXPECT_EMBER_ERROR(bench::measure_bandwidth(4096), "too small to leave the caches");
  EXPECT_EMBER_ERROR(bench::measure_bandwidth(size_t(2) << 20, 0), "expected 1 <= threads <= 256");
  EXPECT_EMBER_ERROR(bench::measure_bandwidth(size_t(2) << 20, 1, 0), "repeats >= 1");
}

// bench_gemv's cases (examples/matmul/gemv_cases.h): each of the four layouts computes W's product
// with the vector, as Ember tensors and as the GemmArgs handed to the peer, on awkward shapes against
// float64; bad --layouts and --matrices are refused with the flag named; the copy count keeps W
// out of the caches.
#include <gtest/gtest.h>

#include <cmath>

#include "examples/matmul/gemv_cases.h"
#include "tests/test_util.h"

namespace ember::matmul_bench {
namespace {

// out[o] in float64 for the layout: a row vector times W (or W^T), or W (or W^T) times a column.
std::vector<double> reference(const GemvCase& c, const std::vector<double>& w, const std::vector<double>& v) {
  std::vector<double> out(size_t(c.out_len()), 0.0);
  for (int64_t o = 0; o < c.out_len(); ++o)
    for (int64_t i = 0; i < c.in_len(); ++i) {
      const bool axpy = c.layout == GemvLayout::XW || c.layout == GemvLayout::Wtv;
      out[size_t(o)] += v[size_t(i)] * (axpy ? w[size_t(i * c.cols + o)] : w[size_t(o * c.cols + i)]);
    }
  return out;
}

TEST(GemvCases, EveryLayoutComputesItsProductAsTensorsAndAsGemmArgs) {
  // Row and column counts that are not multiples of the kernels' 4 or 8 streams or of a vector.
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {37, 53}, {131, 67}, {300, 7}, {9, 1030}})
    for (GemvLayout l : all_gemv_layouts()) {
      const GemvCase c{l, rows, cols};
      Generator gen(uint64_t(rows * 1009 + cols));
      Tensor w = normal({rows, cols}, 0, 1, DType::Float32, &gen), v = normal({c.in_len()}, 0, 1, DType::Float32, &gen);
      const std::vector<double> ref = reference(c, w.to_vector<double>(), v.to_vector<double>());
      Tensor got = gemv_product(c, w, v);
      ASSERT_EQ(got.numel(), c.out_len()) << c.label();
      EXPECT_EQ(got.size(c.layout == GemvLayout::XW || c.layout == GemvLayout::XWt ? 1 : 0), c.out_len()) << c.label();
      std::vector<float> buf(size_t(c.out_len()), -7.f);
      cpu_gemm(gemv_args(c, w.data<float>(), v.data<float>(), buf.data()), MatmulOptions{});
      const std::vector<double> t = got.to_vector<double>();
      const double tol = 1e-5 * std::sqrt(double(c.in_len())) + 1e-6;
      for (int64_t o = 0; o < c.out_len(); ++o) {
        ASSERT_NEAR(t[size_t(o)], ref[size_t(o)], tol) << c.label() << " tensors, output " << o;
        ASSERT_NEAR(buf[size_t(o)], ref[size_t(o)], tol) << c.label() << " GemmArgs, output " << o;
      }
    }
}

TEST(GemvCases, LayoutsParseAndUnknownOnesNameTheFlag) {
  EXPECT_EQ(parse_gemv_layouts("all").size(), 4u);
  EXPECT_EQ(parse_gemv_layouts("Wv, xW"), (std::vector<GemvLayout>{GemvLayout::Wv, GemvLayout::XW}));
  for (const char* bad : {"xw", "", "Wv,WW"}) {
    try {
      parse_gemv_layouts(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--layouts"), std::string::npos) << e.what();
    }
  }
}

TEST(GemvCases, MatricesParseAndMalformedOnesNameTheFlag) {
  EXPECT_EQ(parse_gemv_matrix("768x2304"), (std::pair<int64_t, int64_t>{768, 2304}));
  EXPECT_EQ(parse_gemv_matrix("1x1"), (std::pair<int64_t, int64_t>{1, 1}));
  for (const char* bad : {"768", "768x", "x5", "0x5", "5x0", "5x5x5", "axb", "-3x4", "99999999999x1", "4x 5"}) {
    try {
      parse_gemv_matrix(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--matrices"), std::string::npos) << e.what();
    }
  }
}

TEST(GemvCases, ChosenCasesGroupByMatrixAndBadOnesNameTheFlag) {
  const GemvPlan plan = parse_gemv_cases("xW:768x3072, xWt:50257x768,Wv:768x3072");
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].first, (std::pair<int64_t, int64_t>{768, 3072}));
  EXPECT_EQ(plan[0].second, (std::vector<GemvLayout>{GemvLayout::XW, GemvLayout::Wv}));
  EXPECT_EQ(plan[1].first, (std::pair<int64_t, int64_t>{50257, 768}));
  EXPECT_EQ(plan[1].second, (std::vector<GemvLayout>{GemvLayout::XWt}));
  EXPECT_EQ(gemv_plan({{2, 3}, {4, 5}}, all_gemv_layouts()).size(), 2u);
  for (const char* bad : {"xW768x3072", "xW:768", "xw:768x3072", "all:768x3072", ":5x5", ""}) {
    try {
      parse_gemv_cases(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--cases"), std::string::npos) << e.what();
    }
  }
}

TEST(GemvCases, CopiesTogetherExceedTheColdBytesAndAreTwoAtLeast) {
  EXPECT_EQ(gemv_copies(100, 1000), 10);
  EXPECT_EQ(gemv_copies(300, 1000), 4);
  EXPECT_EQ(gemv_copies(1000, 100), 2);
  EXPECT_EQ(gemv_copies(4.0 * 8192 * 8192, 512e6), 2);
  EXPECT_EQ(gemv_copies(4.0 * 768 * 768, 512e6), 218);
  EXPECT_THROW(gemv_copies(0, 100), Error);
}

}  // namespace
}  // namespace ember::matmul_bench

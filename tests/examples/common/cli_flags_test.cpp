// The range-checked numeric flags and output paths the example programs share.
#include "examples/common/cli_flags.h"
#include "examples/matmul_cuda/gpu_flags.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

using namespace ember;

namespace {
cxxopts::ParseResult parse(cxxopts::Options& o, std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return o.parse(int(argv.size()), argv.data());
}
}  // namespace

TEST(CliFlags, InRangeAcceptsTheBoundsAndRefusesBeyondThemNamingTheFlag) {
  EXPECT_EQ(cli::in_range<int64_t>("--threads", 0, 0, cli::kMaxThreads), 0);
  EXPECT_EQ(cli::in_range<int64_t>("--threads", cli::kMaxThreads, 0, cli::kMaxThreads), cli::kMaxThreads);
  EXPECT_EMBER_ERROR(cli::in_range<int64_t>("--threads", -3, 0, cli::kMaxThreads), "--threads: -3 is out of range (expected 0 to 1024)");
  EXPECT_EMBER_ERROR(cli::in_range<int64_t>("--threads", 100000, 0, cli::kMaxThreads), "--threads: 100000");
  EXPECT_EQ(cli::in_range<double>("--lr", 10.0, 1e-12, 10.0), 10.0);
  EXPECT_EMBER_ERROR(cli::in_range<double>("--lr", 1e300, 1e-12, 10.0, "a learning rate"), "--lr: 1e+300 is out of range (expected a learning rate)");
  EXPECT_EMBER_ERROR(cli::in_range<double>("--lr", std::nan(""), 0.0, 10.0), "--lr: nan");
  EXPECT_EMBER_ERROR(cli::in_range<double>("--x", std::numeric_limits<double>::infinity(), 0.0,
                                           std::numeric_limits<double>::infinity()), "--x: inf");
}

TEST(CliFlags, FlagReadsACxxoptsOptionAndChecksIt) {
  cxxopts::Options o("prog");
  o.add_options()("top-p", "", cxxopts::value<double>()->default_value("1"))(
      "max-new-tokens", "", cxxopts::value<int64_t>()->default_value("32"));
  EXPECT_EQ(cli::flag<double>(parse(o, {}), "top-p", 1e-9, 1.0), 1.0);
  EXPECT_EMBER_ERROR(cli::flag<double>(parse(o, {"--top-p", "1.5"}), "top-p", 1e-9, 1.0, "a mass in (0, 1]"),
                     "--top-p: 1.5 is out of range (expected a mass in (0, 1])");
  EXPECT_EMBER_ERROR(cli::flag<int64_t>(parse(o, {"--max-new-tokens", "-5"}), "max-new-tokens", 0, 1000),
                     "--max-new-tokens: -5 is out of range (expected 0 to 1000)");
  EXPECT_EQ(cli::flag<int64_t>(parse(o, {"--max-new-tokens", "1000"}), "max-new-tokens", 0, 1000), 1000);
  // Not a number of the flag's type: cxxopts refuses it while parsing; cli::parse names the flag.
  EXPECT_ANY_THROW(parse(o, {"--max-new-tokens", "1e12"}));
  std::vector<std::string> args = {"prog", "--top-p", "0.5", "--max-new-tokens", "1e12"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  EXPECT_EMBER_ERROR(cli::parse(o, int(argv.size()), argv.data()), "--max-new-tokens: '1e12' is not a value of the type");
  args = {"prog", "--top-p=abc"};
  argv.clear();
  for (std::string& a : args) argv.push_back(a.data());
  EXPECT_EMBER_ERROR(cli::parse(o, int(argv.size()), argv.data()), "--top-p: 'abc'");
}

TEST(CliFlags, OutputPathsNeedAnExistingFolder) {
  const std::string tmp = ::testing::TempDir();
  EXPECT_EQ(cli::output_path("--json", ""), "");
  EXPECT_EQ(cli::output_path("--json", tmp + "/out.json"), tmp + "/out.json");
  EXPECT_EQ(cli::output_path("--json", "relative.json"), "relative.json");
  EXPECT_EMBER_ERROR(cli::output_path("--json", "/nonexistent_folder_ember/x.json"),
                     "--json: the folder '/nonexistent_folder_ember' of '/nonexistent_folder_ember/x.json' does not exist");
  EXPECT_EMBER_ERROR(cli::output_path("--json", tmp), "is a folder");
}

// bench_matmul_gpu is built only with CUDA; its flag checks live in a header tested here.
TEST(CliFlags, BenchMatmulGpuFlagsAreCheckedWithoutAGpu) {
  auto read = [](std::vector<std::string> args) {
    cxxopts::Options o("bench_matmul_gpu");
    gpu_bench::add_gpu_flags(o, "naive,tiled");
    return gpu_bench::read_gpu_flags(parse(o, std::move(args)));
  };
  gpu_bench::GpuFlags f = read({});
  EXPECT_EQ(f.sizes, (std::vector<int64_t>{256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(f.tiles, (std::vector<int>{4, 8, 16, 32}));
  EXPECT_EQ(f.variants, (std::vector<std::string>{"naive", "tiled"}));
  EXPECT_EQ(f.reps, 10);
  EXPECT_TRUE(f.flush);
  f = read({"--sizes", "64", "--tiles", "16", "--reps", "3", "--no-flush"});
  EXPECT_EQ(f.sizes, (std::vector<int64_t>{64}));
  EXPECT_EQ(f.tiles, (std::vector<int>{16}));
  EXPECT_FALSE(f.flush);
  EXPECT_EMBER_ERROR(read({"--reps", "0"}), "--reps: 0 is out of range");
  EXPECT_EMBER_ERROR(read({"--warmup", "-1"}), "--warmup: -1 is out of range");
  EXPECT_EMBER_ERROR(read({"--max-seconds", "-3"}), "--max-seconds: -3 is out of range");
  EXPECT_EMBER_ERROR(read({"--max-seconds", "1e9"}), "--max-seconds: 1e+09 is out of range (expected seconds from 0.001 to 3600)");
  EXPECT_EMBER_ERROR(read({"--sizes", "0"}), "--sizes: 0 is out of range (expected matrix sizes from 1 to 32768)");
  EXPECT_EMBER_ERROR(read({"--sizes", "1e9"}), "--sizes: '1e9' is not an integer");
  EXPECT_EMBER_ERROR(read({"--sizes", ","}), "--sizes: no sizes given");
  EXPECT_EMBER_ERROR(read({"--tiles", "12"}), "--tiles: 12 is not a compiled TILE");
  EXPECT_EMBER_ERROR(read({"--device", "cpu"}), "--device: 'cpu' is not measured here");
  EXPECT_EMBER_ERROR(read({"--json", "/nonexistent/r.json"}), "--json: the folder '/nonexistent'");
}

// bench_matmul_gpu's options and their range checks, apart from the CUDA code: the program is
// built only with CUDA, but its flags are tested in every build (tests/examples/common).
#pragma once
#include <cstdint>
#include <cxxopts.hpp>
#include <string>
#include <vector>

#include "examples/common/cli_flags.h"
#include "examples/common/cli_lists.h"

namespace ember::gpu_bench {

struct GpuFlags {
  std::vector<int64_t> sizes;  // n of each n x n product
  std::vector<int> tiles;      // TILE values of the tiled kernel
  std::vector<std::string> variants;
  int warmup = 2, reps = 10;
  double max_seconds = 3;
  bool flush = true;
  uint64_t seed = 1;
  std::string json;  // empty: no results file
};

// `all_variants` is the --variants default (gpu_timing.h's kAllGpuVariants, which needs CUDA headers).
inline void add_gpu_flags(cxxopts::Options& options, const std::string& all_variants) {
  options.add_options()
      ("device", "device to benchmark (only 'cuda' here; the CPU study is bench_matmul)", cxxopts::value<std::string>()->default_value("cuda"))
      ("sizes", "comma-separated n", cxxopts::value<std::string>()->default_value("256,512,1024,2048,4096,8192"))
      ("variants", "comma-separated: naive, tiled, register_tiled, register_tiled_db (double-buffered), cublas, cublas_tf32", cxxopts::value<std::string>()->default_value(all_variants))
      ("tiles", "TILE values swept for tiled (4, 8, 16, 32)", cxxopts::value<std::string>()->default_value("4,8,16,32"))
      ("warmup", "untimed runs per point", cxxopts::value<int>()->default_value("2"))
      ("reps", "timed runs per point (the median is reported)", cxxopts::value<int>()->default_value("10"))
      ("max-seconds", "cap on timed seconds per point: fewer reps (at least 3) for slow points", cxxopts::value<double>()->default_value("3"))
      ("no-flush", "do not flush the L2 cache before each timed run")
      ("seed", "seed of the random inputs", cxxopts::value<uint64_t>()->default_value("1"))
      ("json", "write the results as JSON to this path", cxxopts::value<std::string>())
      ("h,help", "show this help");
}

// Every flag checked before the GPU is touched. n is capped at 32768: three n x n float32
// matrices and the reference then take 16 GiB, about what a large GPU holds.
inline GpuFlags read_gpu_flags(const cxxopts::ParseResult& args) {
  GpuFlags f;
  const std::string device = args["device"].as<std::string>();
  EMBER_CHECK(device == "cuda", "--device: '", device, "' is not measured here (expected cuda; for the CPU run bench_matmul)");
  f.sizes = cli::int_list(args["sizes"].as<std::string>(), "--sizes", "matrix sizes such as 256,1024");
  EMBER_CHECK(!f.sizes.empty(), "--sizes: no sizes given (expected matrix sizes such as 256,1024)");
  for (int64_t n : f.sizes) cli::in_range<int64_t>("--sizes", n, 1, 32768, "matrix sizes from 1 to 32768");
  for (int64_t t : cli::int_list(args["tiles"].as<std::string>(), "--tiles", "tile sizes such as 8,16")) {
    EMBER_CHECK(t == 4 || t == 8 || t == 16 || t == 32, "--tiles: ", t, " is not a compiled TILE (expected 4, 8, 16 or 32)");
    f.tiles.push_back(int(t));
  }
  f.variants = cli::split_commas(args["variants"].as<std::string>());
  EMBER_CHECK(!f.variants.empty(), "--variants: no variants given");
  f.warmup = cli::flag<int>(args, "warmup", 0, 1000000);
  f.reps = cli::flag<int>(args, "reps", 1, 1000000);
  f.max_seconds = cli::flag<double>(args, "max-seconds", 1e-3, 3600, "seconds from 0.001 to 3600");
  f.flush = !args.count("no-flush");
  f.seed = args["seed"].as<uint64_t>();
  if (args.count("json")) f.json = cli::output_path("--json", args["json"].as<std::string>());
  return f;
}

}  // namespace ember::gpu_bench

// Helpers shared by the contextual_sparsity subcommands: option parsing, timing, output.
#pragma once
#include <chrono>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "examples/common/bench.h"
#include "framework/core/tensor.h"

namespace ember::study {

using json = nlohmann::json;

int classifier(int argc, char** argv);
int gpt(int argc, char** argv);
int speed(int argc, char** argv);
int head_speed(int argc, char** argv);

// "0.01,0.1,1" -> {0.01, 0.1, 1}; every value must lie in (0, 1].
std::vector<double> parse_fractions(const std::string& s, const char* flag);
// n values log-spaced from lo to hi inclusive, rounded to 3 significant digits.
std::vector<double> log_spaced(double lo, double hi, int n);

double seconds_since(std::chrono::steady_clock::time_point t0);
// Largest |a - b| over two float32 tensors of one shape: the check every timed kernel passes first.
double max_abs_diff(const Tensor& a, const Tensor& b);

// Median wall-clock seconds of `f` over exactly `repeats` runs after `warmup` runs (the shared
// harness's measure, with no time limit cutting the repeats short).
inline double median_seconds(const std::function<void()>& f, int warmup, int repeats) {
  return bench::measure(f, {warmup, repeats, repeats, std::numeric_limits<double>::infinity()}).median_s;
}

// The speed section (also run by `gpt`): the gathered sparse MLP against the dense MLP at width C
// and N hidden units, per batch size and kept fraction, with the predictor's own cost.
struct SpeedOptions {
  int64_t width = 768, hidden = 3072, rank = 32;
  std::vector<int64_t> batches = {1, 16};
  std::vector<double> fractions = {0.05, 0.1, 0.2, 0.3, 0.5, 1.0};
  int warmup = 5, repeats = 60;
  int threads = 1;  // OpenMP threads while timing (0: leave the current setting)
  uint64_t seed = 0;
};
json speed_section(const SpeedOptions& opt);

// The head-speed section: one token's attention step with a KV cache of `cached` positions,
// computing k of `heads` heads (cmd_head_speed.cpp), at each thread count.
struct HeadSpeedOptions {
  int64_t width = 768, heads = 12, cached = 512;
  std::vector<int64_t> ks = {12, 6, 3, 1};
  std::vector<int> threads = {1, 2};
  int warmup = 20, repeats = 201;
  uint64_t seed = 0;
};
json head_speed_section(const HeadSpeedOptions& opt);

// Writes a JSON document (pretty, atomically) to path, creating no folders; ember::Error when it cannot.
using bench::write_json;

}  // namespace ember::study

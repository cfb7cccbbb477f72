#include "common.h"

#include <algorithm>
#include <cmath>

#include "examples/common/cli_lists.h"
#include "framework/core/error.h"

namespace ember::study {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.shape() == b.shape(), "max_abs_diff: shapes differ, ", to_string(a.shape()), " vs ",
              to_string(b.shape()));
  std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, double(std::fabs(x[i] - y[i])));
  return m;
}

std::vector<double> parse_fractions(const std::string& s, const char* flag) {
  std::vector<double> out = cli::double_list(s, flag, "fractions in (0, 1] such as 0.1,0.2");
  for (double v : out) EMBER_CHECK(v > 0 && v <= 1, flag, ": ", v, " is not a fraction in (0, 1]");
  EMBER_CHECK(!out.empty(), flag, ": no fractions given");
  return out;
}

std::vector<double> log_spaced(double lo, double hi, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    double v = n == 1 ? hi : lo * std::pow(hi / lo, double(i) / double(n - 1));
    double scale = std::pow(10.0, std::floor(std::log10(v)) - 2);
    out.push_back(std::round(v / scale) * scale);
  }
  return out;
}


double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace ember::study

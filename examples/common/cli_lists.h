// Comma-separated lists on the command line ("64,128,256", "0.05,0.1"): one parser for every
// example program, so that a typo gets the same clear ember::Error everywhere instead of a bare
// std::invalid_argument from std::stoll. Items are trimmed of spaces and tabs; empty items (a
// trailing comma, ",,") are skipped.
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "framework/core/error.h"

namespace ember::cli {

inline std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    const size_t b = s.find_first_not_of(" \t", start);
    if (b != std::string::npos && b < end) {
      const size_t e = s.find_last_not_of(" \t", end - 1);
      out.push_back(s.substr(b, e - b + 1));
    }
    start = end + 1;
  }
  return out;
}

// Every item must be a whole integer; `flag` and `expected` name the option and its form in the
// error ("--numel", "positive element counts such as 1048576").
inline std::vector<int64_t> int_list(const std::string& s, const std::string& flag, const std::string& expected) {
  std::vector<int64_t> out;
  for (const std::string& item : split_commas(s)) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    EMBER_CHECK(end == item.c_str() + item.size() && errno == 0, flag, ": '", item, "' is not an integer (expected ",
                expected, ")");
    out.push_back(v);
  }
  return out;
}

inline std::vector<double> double_list(const std::string& s, const std::string& flag, const std::string& expected) {
  std::vector<double> out;
  for (const std::string& item : split_commas(s)) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(item.c_str(), &end);
    EMBER_CHECK(end == item.c_str() + item.size() && errno == 0, flag, ": '", item, "' is not a number (expected ",
                expected, ")");
    out.push_back(v);
  }
  return out;
}

}  // namespace ember::cli

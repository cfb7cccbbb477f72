// Numeric command-line flags, range-checked in one place for every example program: a value out
// of range is an ember::Error naming the flag, the value and the accepted range, raised while the
// options are read (before any model or data is loaded), never clamped or taken as is.
#pragma once
#include <cmath>
#include <cstdint>
#include <cxxopts.hpp>
#include <filesystem>
#include <string>
#include <type_traits>

#include "framework/core/error.h"

namespace ember::cli {

// The most OpenMP threads a --threads flag accepts: far above any machine these programs run on,
// far below counts whose thread stacks alone would exhaust memory.
constexpr int64_t kMaxThreads = 1024;

// `value` of flag `flag` ("--lr") must lie in [lo, hi] (and be finite); `expected` says in words
// what is accepted, e.g. "a learning rate in (0, 10]"; empty: "lo to hi".
template <class T>
T in_range(const std::string& flag, T value, T lo, T hi, const std::string& expected = "") {
  static_assert(std::is_arithmetic<T>::value, "in_range: numeric flags only");
  bool ok = value >= lo && value <= hi;
  if constexpr (std::is_floating_point<T>::value) ok = ok && std::isfinite(value);
  EMBER_CHECK(ok, flag, ": ", value, " is out of range (expected ",
              expected.empty() ? str(lo, " to ", hi) : expected, ")");
  return value;
}

// Reads option `name` (without the dashes) from a cxxopts result and checks its range. cxxopts
// itself refuses text that is not a number of type T ("1e12" for an integer flag).
template <class T>
T flag(const cxxopts::ParseResult& r, const std::string& name, T lo, T hi, const std::string& expected = "") {
  return in_range<T>("--" + name, r[name].as<T>(), lo, hi, expected);
}

// o.parse, with one difference: a value cxxopts cannot convert to its flag's type ("1e12" or
// "-x" for an integer) is an ember::Error naming the flag, where cxxopts names only the value.
inline cxxopts::ParseResult parse(cxxopts::Options& o, int argc, char** argv) {
  try {
    return o.parse(argc, argv);
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    const std::string msg = e.what();
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg.rfind("--", 0) != 0) continue;
      const size_t eq = arg.find('=');
      const std::string name = arg.substr(0, eq);
      const std::string value = eq != std::string::npos ? arg.substr(eq + 1) : i + 1 < argc ? argv[i + 1] : "";
      // cxxopts quotes the value with ‘’ (or '' without Unicode).
      if (!value.empty() && (msg.find("\u2018" + value + "\u2019") != std::string::npos ||
                             msg.find("'" + value + "'") != std::string::npos))
        throw Error(str(name, ": '", value, "' is not a value of the type this flag takes (see --help)"));
    }
    throw Error(str(msg, " (see --help)"));
  }
}

// A file a program will write at the end of its run: its folder must exist now, so that a typo
// fails before the run instead of after it. Empty paths (flag not given) pass through.
inline std::string output_path(const std::string& flag, const std::string& path) {
  if (path.empty()) return path;
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  EMBER_CHECK(std::filesystem::is_directory(dir, ec), flag, ": the folder '", dir.string(), "' of '", path,
              "' does not exist (expected a path in an existing folder)");
  EMBER_CHECK(!std::filesystem::is_directory(p, ec), flag, ": '", path, "' is a folder (expected a file path)");
  return path;
}

}  // namespace ember::cli

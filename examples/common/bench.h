// The benchmark harness shared by the studies: time a function (warm-up, repeats, median), name
// the CPU, and write results as JSON (progress: progress_bar.h). Header-only; link the `ember_bench` target.
//
//   bench::Timing t = bench::measure([&] { run(); }, {/*warmup*/ 2, /*repeats*/ 5});
//   double gflops = flops / t.median_s * 1e-9;
//
// Correctness is the caller's job and comes first: validate a variant against a reference before
// timing it (a fast wrong kernel is not a result).
#pragma once
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "framework/core/error.h"
#include "framework/train/io/safetensors.h"

namespace ember::bench {

struct Options {
  int warmup = 2;             // untimed runs first: page faults, caches, thread pools, clocks
  int repeats = 5;            // timed runs wanted
  int min_repeats = 3;        // ... at least, even when a run is slow
  double max_seconds = 10.0;  // stop after min_repeats once the timed runs took this long
};

struct Timing {
  double median_s = 0, min_s = 0, max_s = 0;
  int repeats = 0;
  std::vector<double> samples_s;
  // The median CPU time of the process per run (all its threads). On a shared machine another
  // process's time slices inflate wall time but not this; with one thread it is the cleanest
  // measure of a kernel. (With several threads it also counts their spinning while they wait.)
  double cpu_median_s = 0;
};

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double process_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

inline double median(std::vector<double> s) {
  if (s.empty()) return 0;
  std::sort(s.begin(), s.end());
  size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

// Runs f() opt.warmup times untimed, then times it repeatedly; reports the median (robust to a
// neighbour's burst of work on a shared machine) and the spread.
template <class F>
Timing measure(F&& f, const Options& opt = {}) {
  for (int i = 0; i < opt.warmup; ++i) f();
  Timing t;
  std::vector<double> cpu;
  double total = 0;
  while (int(t.samples_s.size()) < opt.repeats) {
    double c0 = process_cpu_s(), t0 = now_s();
    f();
    double dt = now_s() - t0;
    cpu.push_back(process_cpu_s() - c0);
    t.samples_s.push_back(dt);
    total += dt;
    if (int(t.samples_s.size()) >= opt.min_repeats && total > opt.max_seconds) break;
  }
  if (t.samples_s.empty()) return t;  // repeats <= 0: nothing timed
  t.median_s = median(t.samples_s);
  t.cpu_median_s = median(cpu);
  t.min_s = *std::min_element(t.samples_s.begin(), t.samples_s.end());
  t.max_s = *std::max_element(t.samples_s.begin(), t.samples_s.end());
  t.repeats = int(t.samples_s.size());
  return t;
}

// Times several functions in turns: each warmed up, then one run of each per round, so that a slow
// phase of a shared machine (a neighbour's burst lasts seconds) falls on all of them alike and their
// ratio stays meaningful. Every other round runs them in the opposite order, so that none always
// follows the same neighbour (whose cache footprint and clock it would inherit); samples_s stays in
// round order. opt.max_seconds caps the whole set's timed seconds.
inline std::vector<Timing> measure_interleaved(const std::vector<std::function<void()>>& fs, const Options& opt = {}) {
  for (const auto& f : fs)
    for (int i = 0; i < opt.warmup; ++i) f();
  std::vector<Timing> ts(fs.size());
  std::vector<std::vector<double>> cpu(fs.size());
  double total = 0;
  for (int r = 0; r < opt.repeats; ++r) {
    for (size_t turn = 0; turn < fs.size(); ++turn) {
      const size_t i = r % 2 ? fs.size() - 1 - turn : turn;
      double c0 = process_cpu_s(), t0 = now_s();
      fs[i]();
      double dt = now_s() - t0;
      cpu[i].push_back(process_cpu_s() - c0);
      ts[i].samples_s.push_back(dt);
      total += dt;
    }
    if (r + 1 >= opt.min_repeats && total > opt.max_seconds) break;
  }
  for (size_t i = 0; i < fs.size(); ++i) {
    Timing& t = ts[i];
    if (t.samples_s.empty()) continue;
    t.median_s = median(t.samples_s);
    t.cpu_median_s = median(cpu[i]);
    t.min_s = *std::min_element(t.samples_s.begin(), t.samples_s.end());
    t.max_s = *std::max_element(t.samples_s.begin(), t.samples_s.end());
    t.repeats = int(t.samples_s.size());
  }
  return ts;
}

// How many times faster `a` ran than `b` where both were timed in the same rounds of
// measure_interleaved: the median over rounds of b's time / a's time. A slow phase of the machine
// then cancels within each round instead of landing on one median more than the other. 0 where the
// two were not timed in the same rounds (different sample counts) or not at all.
inline double paired_speedup(const Timing& a, const Timing& b) {
  if (a.samples_s.empty() || a.samples_s.size() != b.samples_s.size()) return 0;
  std::vector<double> r;
  for (size_t i = 0; i < a.samples_s.size(); ++i) r.push_back(b.samples_s[i] / a.samples_s[i]);
  return median(r);
}

inline nlohmann::json to_json(const Timing& t) {
  return {{"median_s", t.median_s}, {"min_s", t.min_s},     {"max_s", t.max_s},
          {"repeats", t.repeats},   {"cpu_median_s", t.cpu_median_s}};
}

// The value of a "key : value" line of /proc/cpuinfo ("" when absent, e.g. not on Linux).
inline std::string cpuinfo_field(const std::string& key) {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    k.erase(k.find_last_not_of(" \t") + 1);
    if (k == key) {
      std::string v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return "";
}

// The CPU's "model name" from /proc/cpuinfo, for a benchmark's header and its JSON.
inline std::string cpu_name() {
  std::string m = cpuinfo_field("model name");
  return m.empty() ? "unknown CPU" : m;
}

// /proc/loadavg's 1-, 5- and 15-minute figures ("unknown" where it cannot be read): the machine may
// be shared, and a reader of the numbers should know how busy it was.
inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  if (!(f >> a >> b >> c)) return "unknown";
  return a + " " + b + " " + c;
}

struct CpuInfo {
  std::string model;  // /proc/cpuinfo "model name" plus family/model numbers (VMs often hide the name)
  double mhz = 0;     // the clock the kernel reports (nominal on a VM; boost may be higher)
  int logical_cpus = 0;
};

// The highest clock of cpu0 in GHz from cpufreq's cpuinfo_max_freq (kHz), the one figure a peak can
// be built on; 0 where the kernel has no cpufreq (most VMs: their "cpu MHz" is nominal, and timing
// a chain of dependent adds reads impossible clocks, e.g. 9.31 GHz, so it is not used).
inline double max_clock_ghz(const std::string& path = "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") {
  std::ifstream f(path);
  double khz = 0;
  if (!(f >> khz) || khz <= 0) return 0;
  return khz * 1e-6;
}

inline CpuInfo cpu_info() {
  CpuInfo c;
  c.model = cpuinfo_field("model name");
  std::string fam = cpuinfo_field("cpu family"), mod = cpuinfo_field("model");
  if (!fam.empty()) c.model += " (family " + fam + ", model " + mod + ")";
  std::string mhz = cpuinfo_field("cpu MHz");
  c.mhz = mhz.empty() ? 0 : std::stod(mhz);
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) c.logical_cpus += line.rfind("processor", 0) == 0;
  return c;
}

// The fraction of the machine's CPU time that was idle over the next `window_s` seconds (from
// /proc/stat; 1 when it cannot be read). Other processes' work distorts timings on a shared box.
inline double idle_fraction(double window_s = 0.5) {
  auto read = [](double& idle, double& total) {
    std::ifstream f("/proc/stat");
    std::string cpu;
    f >> cpu;
    double v, sum = 0, id = 0;
    for (int i = 0; i < 8 && (f >> v); ++i) {
      sum += v;
      if (i == 3 || i == 4) id += v;  // idle, iowait
    }
    idle = id, total = sum;
    return cpu == "cpu" && sum > 0;
  };
  double i0, t0, i1, t1;
  if (!read(i0, t0)) return 1.0;
  std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
  if (!read(i1, t1) || t1 <= t0) return 1.0;
  return (i1 - i0) / (t1 - t0);
}

// Waits (up to max_wait_s) until the CPUs were at least `threshold` idle over half a second, so
// that a measurement starts on a quiet machine. Returns the idle fraction last seen.
inline double wait_for_quiet(double max_wait_s, double threshold = 0.9) {
  double t0 = now_s(), idle = idle_fraction();
  while (idle < threshold && now_s() - t0 < max_wait_s) idle = idle_fraction();
  return idle;
}

// The one JSON result writer: `j` dumped with `indent` and a newline, written to a temporary file
// beside `path` and renamed over it, so that a reader (or a killed run) never sees half a file.
// A path that cannot be written is an ember::Error naming it; nothing is left behind then.
inline void write_json(const std::string& path, const nlohmann::json& j, int indent = 2) {
  EMBER_CHECK(!path.empty(), "write_json: empty path (expected a file path)");
  const std::string text = j.dump(indent) + "\n";
  try {
    io::write_file_atomic(path, std::vector<uint8_t>(text.begin(), text.end()));
  } catch (const Error& e) {
    throw Error(str("write_json: cannot write '", path, "': ", e.what()));
  }
}

// A fixed-width cell for tables: numbers with `prec` decimals, right-aligned in `width`.
inline std::string cell(double v, int width = 9, int prec = 1) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(prec);
  os << v;
  std::string s = os.str();
  return std::string(size_t(std::max(0, width - int(s.size()))), ' ') + s;
}
inline std::string cell(const std::string& s, int width = 9) {
  return std::string(size_t(std::max(0, width - int(s.size()))), ' ') + s;
}

}  // namespace ember::bench

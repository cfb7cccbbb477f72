#include "bench_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "examples/common/bench.h"
#include "framework/core/parallel.h"

namespace bench {

Timing time_it(const std::function<void()>& f, int warmup, int repeats, double min_batch_ms) {
  for (int i = 0; i < warmup; ++i) f();
  auto t0 = Clock::now();
  f();  // also a warm-up call; its time sizes the batches
  double one = std::max(ms_since(t0), 1e-6);
  Timing t;
  t.batch = std::min<int64_t>(100000, std::max<int64_t>(1, int64_t(std::ceil(min_batch_ms / one))));
  std::vector<double> samples;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    auto s = Clock::now();
    for (int64_t i = 0; i < t.batch; ++i) f();
    samples.push_back(ms_since(s) / double(t.batch));
  }
  t.repeats = int(samples.size());
  t.min_ms = *std::min_element(samples.begin(), samples.end());
  t.median_ms = ember::bench::median(samples);
  return t;
}

ember::CsrTensor random_csr(int64_t n, double density, uint64_t seed) {
  ember::Generator g(seed);
  auto p = std::make_shared<ember::CsrPattern>();
  p->rows = p->cols = n;
  p->row_ptr.reserve(size_t(n + 1));
  p->row_ptr.push_back(0);
  size_t expect = size_t(double(n) * double(n) * density * 1.01) + 16;
  p->col_idx.reserve(expect);
  std::vector<float> vals;
  vals.reserve(expect);
  const double log_q = std::log1p(-std::min(density, 1.0 - 1e-12));
  for (int64_t i = 0; i < n; ++i) {
    int64_t j = -1;
    while (true) {
      // Gap to the next nonzero: geometric with success probability `density`.
      double u = 1.0 - g.uniform();  // (0, 1]
      j += 1 + (density >= 1.0 ? 0 : int64_t(std::floor(std::log(u) / log_q)));
      if (j >= n) break;
      p->col_idx.push_back(int32_t(j));
      vals.push_back(float(g.normal()));
    }
    p->row_ptr.push_back(int32_t(p->col_idx.size()));
  }
  ember::Tensor v = ember::from_vector(vals, {int64_t(vals.size())});
  return ember::CsrTensor(std::move(p), v);
}



int64_t cache_bytes(int level) {
  for (int idx = 0; idx < 8; ++idx) {
    std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/";
    std::ifstream lv(base + "level"), ty(base + "type"), sz(base + "size");
    int l = 0;
    std::string type, size;
    if (!(lv >> l) || !(ty >> type) || !(sz >> size)) continue;
    if (l != level || type == "Instruction") continue;
    int64_t v = std::stoll(size);
    char unit = size.back();
    return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : v;
  }
  return 0;
}

CpuSample cpu_sample() {
  CpuSample s;
  std::ifstream st("/proc/stat");
  std::string cpu;
  double v[8] = {0};
  st >> cpu;
  for (double& x : v) st >> x;  // user nice system idle iowait irq softirq steal
  for (double x : v) s.total += x;
  s.busy = s.total - v[3] - v[4];
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  // Fields after the ")" that closes the command name: state is field 3; utime..cstime are 14..17.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 17 && rest >> field; ++i)
    if (i >= 14) s.self += std::stod(field);
  return s;
}

double others_cores(const CpuSample& a, const CpuSample& b) {
  double dt = b.total - a.total;
  if (dt <= 0) return 0;
  double cores = double(std::max(1, int(sysconf(_SC_NPROCESSORS_ONLN))));
  return std::max(0.0, (b.busy - a.busy) - (b.self - a.self)) / dt * cores;
}

double wait_quiet(double max_s, double threshold) {
  auto t0 = Clock::now();
  double used = 0;
  do {
    CpuSample a = cpu_sample();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    used = others_cores(a, cpu_sample());
    if (used < threshold) break;
  } while (ms_since(t0) < max_s * 1e3);
  return used;
}

}  // namespace bench

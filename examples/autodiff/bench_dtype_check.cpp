// What the op table's dtype check costs per op application: the engine's input check as it is now
// (one device and each floating input's dtype among the declared ones), the same loop without the
// dtype part (as it was before the check), and a whole tiny op (a one-element add, no autograd)
// for scale. In turns, medians of repeats after a warm-up. Usage: bench_dtype_check [--iters N]
// [--repeats R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ember.h"
#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"

using namespace ember;

namespace {

// The engine's check before dtypes were checked: devices only.
Device devices_only(const OpInfo& op, const Args& args) {
  const Tensor* first = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined()) continue;
    if (!first) {
      first = &args[i];
      continue;
    }
    EMBER_CHECK(args[i].device() == first->device(), op.label, ": input ", i, " is on another device");
  }
  return first ? first->device() : Device::CPU;
}

template <class F>
double ns_per_call(F&& f, int64_t iters) {
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i) f();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(iters);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t iters = 200000;
  int repeats = 11;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[i + 1]);
    else return std::fprintf(stderr, "usage: bench_dtype_check [--iters N] [--repeats R]\n"), 2;
  }
  builtin_ops();
  std::shared_ptr<const OpInfo> add_op = find_op("add");
  Tensor a = ones({1}), b = ones({1});
  Args args = {a, b};
  volatile int sink = 0;
  auto with_dtypes = [&] { sink = sink + int(primitive_detail::device_of(*add_op, args)); };
  auto without = [&] { sink = sink + int(devices_only(*add_op, args)); };
  auto whole_op = [&] {
    Tensor c = add(a, b);
    sink = sink + int(c.numel());
  };
  std::vector<double> tw, to, top;
  for (int r = 0; r < repeats + 1; ++r) {  // the first round warms up and is dropped
    double x = ns_per_call(with_dtypes, iters), y = ns_per_call(without, iters), z = ns_per_call(whole_op, iters / 10);
    if (r == 0) continue;
    tw.push_back(x);
    to.push_back(y);
    top.push_back(z);
  }
  const double w = median(tw), o = median(to), op = median(top);
  std::printf("input check with dtypes    %8.2f ns per op\n", w);
  std::printf("input check, devices only  %8.2f ns per op\n", o);
  std::printf("the dtype check adds       %8.2f ns per op = %.2f%% of a one-element add (%.0f ns)\n", w - o,
              100.0 * (w - o) / op, op);
  return 0;
}

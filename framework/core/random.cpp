#include "framework/core/random.h"

#include <algorithm>
#include <cmath>

namespace ember {

uint64_t Generator::next_u64() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
double Generator::uniform() { return double(next_u64() >> 11) * (1.0 / 9007199254740992.0); }
double Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * M_PI * u2;
  spare_ = r * std::sin(th);
  has_spare_ = true;
  return r * std::cos(th);
}
Generator& default_generator() {
  static Generator g(0x5eed);
  return g;
}
void manual_seed(uint64_t seed) { default_generator().seed(seed); }

namespace {
template <class F>
Tensor fill_random(const Shape& shape, DType dtype, F&& draw) {
  Tensor t = empty(shape, dtype);
  EMBER_DISPATCH_ALL(dtype, "random", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = scalar_t(draw());
  });
  return t;
}
}  // namespace

Tensor uniform(const Shape& shape, double lo, double hi, DType dtype, Generator* gen) {
  EMBER_CHECK(is_floating(dtype), "uniform: dtype must be floating, got ", dtype);
  Generator& g = gen ? *gen : default_generator();
  // The largest value below hi in the target dtype: lo + (hi - lo) u with u just below 1 can round up
  // to hi, in double arithmetic or when stored as float32 (about once in 2^25 float32 draws).
  float hf = float(hi);
  double top = dtype == DType::Float32 ? double(double(hf) < hi ? hf : std::nextafter(hf, float(lo)))
                                       : std::nextafter(hi, lo);
  return fill_random(shape, dtype, [&] { return std::min(lo + (hi - lo) * g.uniform(), top); });
}
Tensor normal(const Shape& shape, double mean, double stddev, DType dtype, Generator* gen) {
  EMBER_CHECK(is_floating(dtype), "normal: dtype must be floating, got ", dtype);
  Generator& g = gen ? *gen : default_generator();
  return fill_random(shape, dtype, [&] { return mean + stddev * g.normal(); });
}
Tensor rand(const Shape& shape, DType dtype, Generator* gen) { return uniform(shape, 0, 1, dtype, gen); }
Tensor randn(const Shape& shape, DType dtype, Generator* gen) { return normal(shape, 0, 1, dtype, gen); }
Tensor randint(const Shape& shape, int64_t lo, int64_t hi, Generator* gen) {
  EMBER_CHECK(hi > lo, "randint: empty range [", lo, ", ", hi, ")");
  Generator& g = gen ? *gen : default_generator();
  uint64_t span = uint64_t(hi - lo);
  return fill_random(shape, DType::Int64, [&] { return double(lo + int64_t(g.next_u64() % span)); });
}

}  // namespace ember

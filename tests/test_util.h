// Helpers shared by the tests: float64 references and tolerant comparisons.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ember.h"

namespace ember::testing {

// Random float64 input of a shape, away from zero when `positive` (for log, sqrt, div).
inline Tensor random(const Shape& shape, uint64_t seed, bool positive = false) {
  Generator g(seed);
  return positive ? uniform(shape, 0.5, 2.0, DType::Float64, &g) : normal(shape, 0.0, 1.0, DType::Float64, &g);
}

// |a - b| <= atol + rtol * |b| everywhere, with a readable failure naming the first bad element.
inline ::testing::AssertionResult all_close(const Tensor& a, const Tensor& b, double atol = 1e-6, double rtol = 1e-5) {
  if (a.shape() != b.shape())
    return ::testing::AssertionFailure() << "shapes differ: " << to_string(a.shape()) << " vs " << to_string(b.shape());
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::abs(x[i] - y[i]) <= atol + rtol * std::abs(y[i])))
      return ::testing::AssertionFailure() << "element " << i << ": " << x[i] << " vs " << y[i];
  return ::testing::AssertionSuccess();
}

// Runs gradcheck and turns its report into a gtest assertion.
inline ::testing::AssertionResult grad_ok(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                          const std::vector<Tensor>& inputs, GradcheckOptions opt = {}) {
  GradcheckResult r = gradcheck(f, inputs, opt);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

// Expects `stmt` to throw ember::Error whose message contains `needle`.
#define EXPECT_EMBER_ERROR(stmt, needle)                                                    \
  do {                                                                                      \
    try {                                                                                   \
      stmt;                                                                                 \
      ADD_FAILURE() << "expected ember::Error containing '" << (needle) << "'";             \
    } catch (const ::ember::Error& e) {                                                     \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what(); \
    }                                                                                       \
  } while (0)

}  // namespace ember::testing

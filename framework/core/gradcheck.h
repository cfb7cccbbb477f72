// gradcheck: compares a function's VJP and JVP with float64 central differences, element by
// element, and reports the worst disagreement (which output, which input element, both values).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace ember {

struct GradcheckOptions {
  double eps = 1e-6;   // finite-difference step
  double atol = 1e-5;  // pass when |analytic - numeric| <= atol + rtol * |numeric|
  double rtol = 1e-3;
  bool check_vjp = true;
  bool check_jvp = true;
  bool check_dot_product = true;  // <J v, u> == <v, J^T u> for random u, v
  uint64_t seed = 1234;           // for the random u and v
};

struct GradcheckResult {
  bool ok = true;
  double max_error = 0;  // largest |analytic - numeric| - rtol * |numeric| seen
  std::string mode;      // "vjp", "jvp" or "dot" where the worst element was found
  int input = -1;        // which input
  Shape input_index;     // which element of it
  Shape output_index;    // which output element
  double analytic = 0, numeric = 0;
  std::string message;   // a readable summary of the above
};

// Checks f at `inputs` (every input must be float64; non-contiguous views are fine).
// f must return one tensor; to check several outputs, concatenate them.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& opt = {});

}  // namespace ember

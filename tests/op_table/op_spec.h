// The op table's test side, in the spirit of ggml's test-backend-ops: for every primitive in
// ember::builtin_ops(), one OpSpec says how to call it on sample inputs and what a float64
// reference computes there. tests/ops/op_table_test.cpp runs every check on every spec (forward
// float64 and float32 against the reference, gradcheck of VJP and JVP, grad of grad, fused against
// composite backward, every kernel variant against the default, CUDA against CPU, the declared
// error cases), and bench_ops --op NAME times the same calls. A primitive without a spec fails the
// suite, so no op exists without coverage.
//
// Plain C++ (no gtest): bench_ops links it too.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ember.h"

namespace ember::optable {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Sample {
  std::string label;           // what is awkward about it: "[7, 33] transposed, dim 0"
  std::vector<Tensor> inputs;  // float64 (int64 for indices), random, never all zeros
  Fn call;                     // applies the op with its attributes bound
  Fn reference;                // an independent float64 computation of the same result
  // Inputs that carry a gradient (perturbed by gradcheck); empty means every floating input.
  std::vector<size_t> differentiable;
  double atol = 1e-10, rtol = 1e-9;  // float64 forward tolerance against the reference
  bool gradcheck = true;             // false where the op is not differentiable at the sample
  double grad_eps = 1e-6;            // finite-difference step (larger where the op rounds)
  bool second_order = true;          // run grad of grad on this sample
};

struct ErrorCase {
  std::string label;
  std::function<void()> run;  // must throw ember::Error
  std::string expect;         // a part of its message (the op's name, what was wrong)
};

struct OpSpec {
  std::string op;                              // the primitive's name in the table
  std::function<std::vector<Sample>()> samples;
  // One large sample for bench_ops (about n elements along the main dims); defaults to the
  // last test sample.
  std::function<Sample(int64_t n)> bench;
  std::vector<ErrorCase> errors;
  double f32_rtol = 2e-5, f32_atol = 2e-5;  // float32 forward against the float64 reference
  double grad_atol = 1e-5, grad_rtol = 1e-3;
};

// Every spec, built on first use (tests/op_table/specs_*.cpp each add one family).
const std::vector<OpSpec>& all_specs();
const OpSpec* find_spec(const std::string& op);  // nullptr when none

// One per family; all_specs() calls them.
void add_elementwise_specs(std::vector<OpSpec>& out);
void add_shape_specs(std::vector<OpSpec>& out);
void add_reduce_specs(std::vector<OpSpec>& out);
void add_matmul_specs(std::vector<OpSpec>& out);
void add_nn_specs(std::vector<OpSpec>& out);
void add_select_specs(std::vector<OpSpec>& out);
void add_index_specs(std::vector<OpSpec>& out);
void add_sparse_specs(std::vector<OpSpec>& out);
void add_attention_specs(std::vector<OpSpec>& out);
void add_conv_pool_norm_specs(std::vector<OpSpec>& out);  // conv2d and its gradients, max_pool2d, batch_norm

// ---- helpers for writing specs ----

// A sample from its parts; atol is the float64 forward tolerance (rtol 1e-9).
Sample make_sample(const std::string& label, std::vector<Tensor> inputs, Fn call, Fn reference, double atol = 1e-11);

Tensor rand64(const Shape& shape, uint64_t seed, bool positive = false);  // N(0, 1), or U(0.5, 2)
Tensor transposed64(const Shape& shape, uint64_t seed, bool positive = false);  // a transposed view
Tensor strided64(const Shape& shape, uint64_t seed, bool positive = false);     // every 2nd element
Tensor expanded64(const Shape& shape, uint64_t seed, bool positive = false);    // stride 0 in dim 0
// Calls f(index) for every multi-index of shape, row-major.
void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& f);
// A float64 tensor with element i = f(i).
Tensor ref_tensor(const Shape& shape, const std::function<double(const Shape&)>& f);
Tensor ref_unary(const Tensor& x, const std::function<double(double)>& f);
Tensor ref_binary(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& f);
Shape ref_broadcast(const Shape& a, const Shape& b);
Shape broadcast_index(const Shape& out, const Shape& in);
// Tensors of the same values in another dtype (int64 stay int64).
std::vector<Tensor> to_dtype(const std::vector<Tensor>& xs, DType dtype);
std::vector<Tensor> to_device(const std::vector<Tensor>& xs, Device device);

}  // namespace ember::optable

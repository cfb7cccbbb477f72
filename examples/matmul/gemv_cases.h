// The matrix-vector products of bench_gemv: the four ways a product with one row or one column
// reaches matmul's GEMV path, each over a stored row-major matrix W (rows x cols):
//   xW    x (1 x rows) @ W               a row vector times W (GPT-2's Conv1D weights in decode)
//   xWt   x (1 x cols) @ W^T             a row vector times a transposed W (nn.Linear, the tied LM head)
//   Wv    W @ v (cols x 1)               W times a column vector (the sparse study's dense baseline)
//   Wtv   W^T @ v (rows x 1)             a transposed W times a column vector
// Each layout is given both as Ember tensors (what a user writes) and as GemmArgs (what the MKL
// peer is handed), so that both sides compute the same product from the same bytes.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "examples/common/cli_lists.h"
#include "framework/core/error.h"
#include "ops/matmul/matmul.h"

namespace ember::matmul_bench {

enum class GemvLayout { XW, XWt, Wv, Wtv };

inline const std::vector<GemvLayout>& all_gemv_layouts() {
  static const std::vector<GemvLayout> all = {GemvLayout::XW, GemvLayout::XWt, GemvLayout::Wv, GemvLayout::Wtv};
  return all;
}

inline std::string gemv_layout_name(GemvLayout l) {
  switch (l) {
    case GemvLayout::XW: return "xW";
    case GemvLayout::XWt: return "xWt";
    case GemvLayout::Wv: return "Wv";
    case GemvLayout::Wtv: return "Wtv";
  }
  return "?";
}

// "xW,Wv" or "all".
inline std::vector<GemvLayout> parse_gemv_layouts(const std::string& s) {
  std::vector<GemvLayout> out;
  for (const std::string& item : cli::split_commas(s)) {
    if (item == "all") return all_gemv_layouts();
    bool found = false;
    for (GemvLayout l : all_gemv_layouts())
      if (item == gemv_layout_name(l)) out.push_back(l), found = true;
    EMBER_CHECK(found, "--layouts: unknown layout '", item, "' (expected xW, xWt, Wv, Wtv or all)");
  }
  EMBER_CHECK(!out.empty(), "--layouts: no layout given (expected xW, xWt, Wv, Wtv or all)");
  return out;
}

struct GemvCase {
  GemvLayout layout;
  int64_t rows, cols;  // of the stored row-major W
  int64_t in_len() const { return layout == GemvLayout::XW || layout == GemvLayout::Wtv ? rows : cols; }
  int64_t out_len() const { return layout == GemvLayout::XW || layout == GemvLayout::Wtv ? cols : rows; }
  double matrix_bytes() const { return 4.0 * double(rows) * double(cols); }
  std::string label() const {
    return gemv_layout_name(layout) + " " + std::to_string(rows) + "x" + std::to_string(cols);
  }
};

// "768x2304" -> {768, 2304}: W's rows and columns, each in [1, 2^31).
inline std::pair<int64_t, int64_t> parse_gemv_matrix(const std::string& s) {
  auto dim = [](const std::string& t) -> int64_t {
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 10) return -1;
    const int64_t v = std::stoll(t);
    return v >= 1 && v < (int64_t(1) << 31) ? v : -1;
  };
  const size_t x = s.find('x');
  const int64_t r = x == std::string::npos ? -1 : dim(s.substr(0, x));
  const int64_t c = x == std::string::npos ? -1 : dim(s.substr(x + 1));
  EMBER_CHECK(r > 0 && c > 0, "--matrices: '", s, "' is not ROWSxCOLS with sizes from 1 to 2^31 - 1 (e.g. 768x2304)");
  return {r, c};
}

// The plan of a run: each matrix once (its copies are allocated once), with the layouts to time on it.
using GemvPlan = std::vector<std::pair<std::pair<int64_t, int64_t>, std::vector<GemvLayout>>>;

// Every layout on every matrix (--matrices x --layouts).
inline GemvPlan gemv_plan(const std::vector<std::pair<int64_t, int64_t>>& matrices, const std::vector<GemvLayout>& layouts) {
  GemvPlan plan;
  for (const auto& m : matrices) plan.push_back({m, layouts});
  return plan;
}

// --cases "xW:768x3072,xWt:50257x768,Wv:768x3072": chosen pairs, grouped by matrix in first-seen order.
inline GemvPlan parse_gemv_cases(const std::string& s) {
  GemvPlan plan;
  for (const std::string& item : cli::split_commas(s)) {
    const size_t colon = item.find(':');
    EMBER_CHECK(colon != std::string::npos, "--cases: '", item, "' is not LAYOUT:ROWSxCOLS (e.g. xW:768x3072)");
    std::vector<GemvLayout> l;
    std::pair<int64_t, int64_t> m;
    try {
      l = parse_gemv_layouts(item.substr(0, colon));
      m = parse_gemv_matrix(item.substr(colon + 1));
    } catch (const Error& e) {
      throw Error(str("--cases: '", item, "': ", e.what()));
    }
    EMBER_CHECK(l.size() == 1, "--cases: '", item, "' names more than one layout (one LAYOUT:ROWSxCOLS per case)");
    auto it = std::find_if(plan.begin(), plan.end(), [&](const auto& p) { return p.first == m; });
    if (it == plan.end()) plan.push_back({m, l});
    else it->second.push_back(l[0]);
  }
  EMBER_CHECK(!plan.empty(), "--cases: no case given (expected LAYOUT:ROWSxCOLS, e.g. xW:768x3072)");
  return plan;
}

// The product as Ember computes it for a user: w is W (rows x cols), v the vector of in_len()
// elements as a row (1 x n) or a column (n x 1), as the layout takes it.
inline Tensor gemv_product(const GemvCase& c, const Tensor& w, const Tensor& v) {
  switch (c.layout) {
    case GemvLayout::XW: return matmul(v.reshape({1, c.rows}), w);
    case GemvLayout::XWt: return matmul(v.reshape({1, c.cols}), w.t());
    case GemvLayout::Wv: return matmul(w, v.reshape({c.cols, 1}));
    case GemvLayout::Wtv: return matmul(w.t(), v.reshape({c.rows, 1}));
  }
  throw Error("gemv_product: unknown layout");
}

// The same product as GemmArgs over float32 buffers: w (rows x cols, row-major), v (in_len()
// contiguous floats), out (out_len() floats).
inline GemmArgs gemv_args(const GemvCase& c, const float* w, const float* v, float* out) {
  const int64_t R = c.rows, C = c.cols;
  switch (c.layout) {
    case GemvLayout::XW: return {1, C, R, v, R, 1, w, C, 1, out, C, DType::Float32};
    case GemvLayout::XWt: return {1, R, C, v, C, 1, w, 1, C, out, R, DType::Float32};
    case GemvLayout::Wv: return {R, 1, C, w, C, 1, v, 1, 1, out, 1, DType::Float32};
    case GemvLayout::Wtv: return {C, 1, R, w, 1, C, v, 1, 1, out, 1, DType::Float32};
  }
  throw Error("gemv_args: unknown layout");
}

// How many copies of a matrix of `matrix_bytes` a run cycles through so that each product reads its
// matrix from DRAM: together at least `cold_bytes` (several times the last-level cache), and two
// at least, so that no product finds the previous one's matrix in cache.
inline int64_t gemv_copies(double matrix_bytes, double cold_bytes) {
  EMBER_CHECK(matrix_bytes > 0 && cold_bytes >= 0, "gemv_copies: expected a positive matrix size, got ", matrix_bytes);
  const double n = cold_bytes / matrix_bytes;
  return n < 2 ? 2 : int64_t(n) + (double(int64_t(n)) < n ? 1 : 0);
}

}  // namespace ember::matmul_bench

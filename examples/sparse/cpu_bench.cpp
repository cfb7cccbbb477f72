#include "cpu_bench.h"

#include <algorithm>
#include <cmath>

#include "examples/common/bench.h"
#include "framework/core/parallel.h"
#include "ops/matmul/matmul.h"
#include "ops/sparse/sparse_ops.h"

using namespace ember;

namespace bench {

namespace {

// Sets the OpenMP thread count for the guard's lifetime.
class ThreadsGuard {
 public:
  explicit ThreadsGuard(int n) : prev_(num_threads()) { omp_set_num_threads(n); }
  ~ThreadsGuard() { omp_set_num_threads(prev_); }

 private:
  int prev_;
};

double max_rel_error(const std::vector<double>& got, const std::vector<double>& want) {
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

}  // namespace

void cpu_spmv_case(const CsrTensor& a, const Tensor& x, const Tensor& dense, const Config& cfg, json& row) {
  // Validate against float64 before timing anything.
  std::vector<double> y = spmv(a, x).to_vector<double>();
  std::vector<double> want = spmv(a.to(DType::Float64), x.to(DType::Float64)).to_vector<double>();
  double err = max_rel_error(y, want);
  EMBER_CHECK(err < 1e-4, "bench_sparse: Ember's SpMV disagrees with float64 (relative error ", err, ")");
  row["ember_rel_err"] = err;
  row["ember_sum"] = sum_of(y);
  for (int t : cfg.threads) {
    ThreadsGuard g(t);
    put(row, key("ember", t), time_it([&] { spmv(a, x); }, cfg.warmup, cfg.repeats));
    if (dense.defined())
      put(row, key("ember_setup", t), time_it([&] { spmv(dense_to_csr(dense), x); }, cfg.warmup, cfg.repeats));
  }
  if (dense.defined()) {
    double derr = max_rel_error(matmul(dense, x).to_vector<double>(), want);
    EMBER_CHECK(derr < 1e-4, "bench_sparse: Ember's dense matmul disagrees with float64 (relative error ", derr, ")");
    put(row, "dense", time_it([&] { matmul(dense, x); }, cfg.warmup, cfg.repeats));
  }
}

void cpu_spgemm_case(const CsrTensor& a, const Tensor& dense, const Config& cfg, std::map<int64_t, Timing>& dense_cache,
                     json& row) {
  sparse::cpu::SpgemmProfile prof;
  CsrTensor c = spgemm(a, a, &prof);
  CsrTensor a64 = a.to(DType::Float64);
  CsrTensor c64 = spgemm(a64, a64);
  EMBER_CHECK(c.nnz() == c64.nnz(), "bench_sparse: SpGEMM nonzeros differ between float32 and float64");
  std::vector<double> cv = c.values().to_vector<double>();
  double err = max_rel_error(cv, c64.values().to_vector<double>());
  EMBER_CHECK(err < 1e-4, "bench_sparse: Ember's SpGEMM disagrees with float64 (relative error ", err, ")");
  row["ember_rel_err"] = err;
  row["c_nnz"] = c.nnz();
  row["c_sum"] = sum_of(cv);
  row["products"] = prof.products;
  for (int t : cfg.threads) {
    ThreadsGuard g(t);
    put(row, key("ember", t), time_it([&] { spgemm(a, a); }, cfg.warmup, cfg.repeats));
    if (dense.defined())
      put(row, key("ember_setup", t), time_it([&] {
            CsrTensor s = dense_to_csr(dense);
            spgemm(s, s);
          }, cfg.warmup, cfg.repeats));
  }
  if (dense.defined() && a.rows() <= cfg.max_dense_gemm_n) {
    auto it = dense_cache.find(a.rows());
    if (it == dense_cache.end()) {
      double derr = max_rel_error(matmul(dense, dense).to_vector<double>(), c64.to_dense().to_vector<double>());
      EMBER_CHECK(derr < 1e-4, "bench_sparse: Ember's dense GEMM disagrees with float64 (relative error ", derr, ")");
      it = dense_cache.emplace(a.rows(), time_it([&] { matmul(dense, dense); }, 0, std::min(cfg.repeats, 3))).first;
      row["dense_measured_here"] = true;
    }
    put(row, "dense", it->second);
  }
}

json cpu_profile(const CsrTensor& a, const Tensor& dense, const Tensor& x, const Config& cfg) {
  // Each phase's median over the repeats, timed on its own.
  json out;
  auto phase = [&](json& list, const std::string& name, const std::function<void()>& f) {
    Timing t = time_it(f, cfg.warmup, cfg.repeats, 0.0);
    list.push_back({{"phase", name}, {"ms", t.median_ms}});
  };
  CsrTensor s;
  json spmv_phases = json::array();
  phase(spmv_phases, "dense -> CSR (count, scan, fill)", [&] { s = dense_to_csr(dense); });
  phase(spmv_phases, "SpMV y = A x", [&] { spmv(s, x); });
  out["spmv"] = spmv_phases;

  json g = json::array();
  phase(g, "dense -> CSR (count, scan, fill)", [&] { s = dense_to_csr(dense); });
  std::vector<sparse::cpu::SpgemmProfile> runs;
  for (int r = 0; r < cfg.warmup + cfg.repeats; ++r) {
    sparse::cpu::SpgemmProfile p;
    spgemm(s, s, &p);
    if (r >= cfg.warmup) runs.push_back(p);
  }
  auto median = [&](double sparse::cpu::SpgemmProfile::*field) {
    std::vector<double> v;
    for (auto& p : runs) v.push_back(p.*field);
    return ember::bench::median(v);
  };
  g.push_back({{"phase", "SpGEMM: products per row (load balance)"}, {"ms", median(&sparse::cpu::SpgemmProfile::work_ms)}});
  g.push_back({{"phase", "SpGEMM: symbolic pass (nonzeros per row)"}, {"ms", median(&sparse::cpu::SpgemmProfile::symbolic_ms)}});
  g.push_back({{"phase", "SpGEMM: prefix sum -> row pointers"}, {"ms", median(&sparse::cpu::SpgemmProfile::scan_ms)}});
  g.push_back({{"phase", "SpGEMM: allocate C"}, {"ms", median(&sparse::cpu::SpgemmProfile::alloc_ms)}});
  g.push_back({{"phase", "SpGEMM: numeric pass (accumulate, sort)"}, {"ms", median(&sparse::cpu::SpgemmProfile::numeric_ms)}});
  if (!runs.empty() && runs.front().one_pass)  // no symbolic pass: the rows were written to upper-bound slots
    g.push_back({{"phase", "SpGEMM: rows moved from their slots into C (one-pass mode)"},
                 {"ms", median(&sparse::cpu::SpgemmProfile::compact_ms)}});
  out["spgemm"] = g;
  return out;
}

}  // namespace bench

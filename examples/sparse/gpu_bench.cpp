#include "gpu_bench.h"

#include <algorithm>
#include <cmath>

#include "examples/common/bench.h"
#include "ops/sparse/sparse_ops.h"
#ifdef EMBER_HAS_CUDA
#include "examples/sparse/study/cusparse.h"
#endif

using namespace ember;

namespace bench {

#ifndef EMBER_HAS_CUDA

bool gpu_usable(std::string* why) {
  *why = "built without the CUDA backend (EMBER_CUDA=OFF)";
  return false;
}
std::string gpu_name() { return "none"; }
void gpu_spmv_case(const CsrTensor&, const Tensor&, const Tensor&, const Tensor&, const Config&, json&) {
  throw Error("bench_sparse: GPU requested in a build without CUDA");
}
void gpu_spgemm_case(const CsrTensor&, const Tensor&, const CsrTensor&, const Config&, json&) {
  throw Error("bench_sparse: GPU requested in a build without CUDA");
}
json gpu_profile(const CsrTensor&, const Tensor&, const Tensor&, const Config&) {
  throw Error("bench_sparse: GPU requested in a build without CUDA");
}

#else

namespace gpu = ember::sparse_cuda_study;

namespace {

// Median of `repeats` event-timed calls after `warmup` untimed ones (operands resident).
Timing time_gpu(const std::function<void()>& f, int warmup, int repeats) {
  for (int i = 0; i < warmup + 1; ++i) f();
  gpu::synchronize();
  gpu::EventTimer timer;
  std::vector<double> s;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    timer.start();
    f();
    s.push_back(timer.stop_ms());
  }
  Timing t;
  t.repeats = int(s.size());
  t.min_ms = *std::min_element(s.begin(), s.end());
  t.median_ms = ember::bench::median(s);
  return t;
}

// The same with a host clock and synchronisation, for pipelines that include host work.
Timing time_host(const std::function<void()>& f, int warmup, int repeats) {
  return time_it([&] {
    f();
    gpu::synchronize();
  }, warmup, repeats, 0.0);
}

double max_rel_error(const Tensor& got, const Tensor& want) {
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < w.size(); ++i) {
    err = std::max(err, std::abs(g[i] - w[i]));
    scale = std::max(scale, std::abs(w[i]));
  }
  return err / scale;
}

}  // namespace

bool gpu_usable(std::string* why) {
  if (!gpu::available()) {
    *why = "no usable GPU (cudaGetDeviceCount failed or found none)";
    return false;
  }
  return true;
}

std::string gpu_name() { return gpu::device_name(); }

void gpu_spmv_case(const CsrTensor& a, const Tensor& x, const Tensor& dense, const Tensor& y_cpu, const Config& cfg,
                   json& row) {
  gpu::DeviceCsr da = gpu::DeviceCsr::upload(a);
  gpu::DeviceDense dx = gpu::DeviceDense::upload(x), dy = gpu::DeviceDense::allocate(a.rows(), 1);
  gpu::spmv(da, dx, dy);
  double err = max_rel_error(dy.download().reshape({a.rows()}), y_cpu);
  EMBER_CHECK(err < 1e-4, "bench_sparse: cuSPARSE SpMV disagrees with the CPU (relative error ", err, ")");
  row["cusparse_rel_err"] = err;
  put(row, "cusparse", time_gpu([&] { gpu::spmv(da, dx, dy); }, cfg.warmup, cfg.repeats));
  if (!dense.defined()) return;
  put(row, "cusparse_setup", time_host([&] {
        gpu::release_handles();
        CsrTensor s = dense_to_csr(dense);
        gpu::DeviceCsr sa = gpu::DeviceCsr::upload(s);
        gpu::DeviceDense sx = gpu::DeviceDense::upload(x), sy = gpu::DeviceDense::allocate(a.rows(), 1);
        gpu::spmv(sa, sx, sy);
        sy.download();
      }, cfg.warmup, cfg.repeats));
  gpu::DeviceDense dd = gpu::DeviceDense::upload(dense);
  put(row, "cublas", time_gpu([&] { gpu::gemv(dd, dx, dy); }, cfg.warmup, cfg.repeats));
  put(row, "cublas_setup", time_host([&] {
        gpu::release_handles();
        gpu::DeviceDense sd = gpu::DeviceDense::upload(dense), sx = gpu::DeviceDense::upload(x);
        gpu::DeviceDense sy = gpu::DeviceDense::allocate(a.rows(), 1);
        gpu::gemv(sd, sx, sy);
        sy.download();
      }, cfg.warmup, cfg.repeats));
}

void gpu_spgemm_case(const CsrTensor& a, const Tensor& dense, const CsrTensor& c_cpu, const Config& cfg, json& row) {
  gpu::DeviceCsr da = gpu::DeviceCsr::upload(a);
  CsrTensor c = gpu::spgemm(da, da).download();
  EMBER_CHECK(c.nnz() == c_cpu.nnz(), "bench_sparse: cuSPARSE SpGEMM has ", c.nnz(), " nonzeros, the CPU ", c_cpu.nnz());
  double err = max_rel_error(c.values(), c_cpu.values());
  EMBER_CHECK(err < 1e-4, "bench_sparse: cuSPARSE SpGEMM disagrees with the CPU (relative error ", err, ")");
  row["cusparse_rel_err"] = err;
  // SpGEMM's "operation alone" includes its own workspace queries and output allocation: they are
  // part of every call, since C's size is only known after the compute step.
  put(row, "cusparse", time_gpu([&] { gpu::spgemm(da, da); }, cfg.warmup, cfg.repeats));
  if (!dense.defined()) return;
  put(row, "cusparse_setup", time_host([&] {
        gpu::release_handles();
        CsrTensor s = dense_to_csr(dense);
        gpu::DeviceCsr sa = gpu::DeviceCsr::upload(s);
        gpu::spgemm(sa, sa).download();
      }, cfg.warmup, cfg.repeats));
  gpu::DeviceDense dd = gpu::DeviceDense::upload(dense), dc = gpu::DeviceDense::allocate(a.rows(), a.cols());
  put(row, "cublas", time_gpu([&] { gpu::gemm(dd, dd, dc); }, cfg.warmup, cfg.repeats));
  put(row, "cublas_setup", time_host([&] {
        gpu::release_handles();
        gpu::DeviceDense sd = gpu::DeviceDense::upload(dense), sc = gpu::DeviceDense::allocate(a.rows(), a.cols());
        gpu::gemm(sd, sd, sc);
        sc.download();
      }, cfg.warmup, cfg.repeats));
}

json gpu_profile(const CsrTensor& a, const Tensor& dense, const Tensor& x, const Config& cfg) {
  // One pass per repeat through the setup pipeline; each statement synchronised and timed.
  std::vector<std::string> names;
  std::vector<std::vector<double>> ms;
  auto record = [&](size_t i, const std::string& name, Clock::time_point t0) {
    gpu::synchronize();
    if (names.size() <= i) {
      names.push_back(name);
      ms.emplace_back();
    }
    ms[i].push_back(ms_since(t0));
  };
  json out;
  for (const char* op : {"spmv", "spgemm"}) {
    names.clear();
    ms.clear();
    for (int r = 0; r < cfg.warmup + cfg.repeats; ++r) {
      size_t i = 0;
      gpu::release_handles();
      gpu::synchronize();
      auto t = Clock::now();
      gpu::create_handles();
      record(i++, "create cuSPARSE + cuBLAS handles", t);
      t = Clock::now();
      CsrTensor s = dense_to_csr(dense);
      record(i++, "dense -> CSR on the CPU", t);
      t = Clock::now();
      gpu::DeviceCsr da = gpu::DeviceCsr::upload(s);
      record(i++, "upload A (cudaMalloc + H2D)", t);
      if (std::string(op) == "spmv") {
        t = Clock::now();
        gpu::DeviceDense dx = gpu::DeviceDense::upload(x), dy = gpu::DeviceDense::allocate(a.rows(), 1);
        record(i++, "upload x, allocate y", t);
        t = Clock::now();
        gpu::spmv(da, dx, dy);
        record(i++, "first SpMV (descriptors, buffer size, workspace, kernel)", t);
        t = Clock::now();
        gpu::spmv(da, dx, dy);
        record(i++, "second SpMV (all cached)", t);
        t = Clock::now();
        dy.download();
        record(i++, "download y (D2H)", t);
      } else {
        gpu::SpgemmPhases ph;
        t = Clock::now();
        gpu::DeviceCsr dc = gpu::spgemm(da, da, &ph);
        record(i++, "SpGEMM total", t);
        t = Clock::now();
        dc.download();
        record(i++, "download C (D2H + validation)", t);
        const std::pair<const char*, double> parts[] = {{"  of which work estimation", ph.work_estimation_ms},
                                                         {"  of which compute", ph.compute_ms},
                                                         {"  of which allocate C", ph.alloc_ms},
                                                         {"  of which copy into C", ph.copy_ms}};
        for (auto& [n, v] : parts) {
          if (names.size() <= i) {
            names.push_back(n);
            ms.emplace_back();
          }
          ms[i++].push_back(v);
        }
      }
    }
    json list = json::array();
    for (size_t i = 0; i < names.size(); ++i) {
      std::vector<double> v(ms[i].begin() + cfg.warmup, ms[i].end());
      list.push_back({{"phase", names[i]}, {"ms", ember::bench::median(v)}});
    }
    out[op] = list;
  }
  return out;
}

#endif

}  // namespace bench

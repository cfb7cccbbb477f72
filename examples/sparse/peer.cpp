#include "peer.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "examples/common/peer_python.h"

using namespace ember;

namespace bench {

PeerCases::PeerCases(std::string dir) : dir_(std::move(dir)) { std::filesystem::create_directories(dir_); }

json PeerCases::run_case(const std::string& id, const std::string& op, const CsrTensor& a, const Tensor& x,
                         bool setup, bool dense) {
  std::string file = dir_ + "/" + id + ".bin";
  {
    std::ofstream f(file, std::ios::binary);
    EMBER_CHECK(f, "bench_sparse: cannot write ", file);
    const CsrPattern& p = a.pattern();
    Tensor v = a.values().contiguous();
    int32_t version = 1;
    int64_t head[4] = {p.rows, p.cols, p.nnz(), x.defined() ? 1 : 0};
    f.write("EMSP", 4);
    f.write(reinterpret_cast<const char*>(&version), sizeof version);
    f.write(reinterpret_cast<const char*>(head), sizeof head);
    f.write(reinterpret_cast<const char*>(p.row_ptr.data()), std::streamsize(p.row_ptr.size() * sizeof(int32_t)));
    f.write(reinterpret_cast<const char*>(p.col_idx.data()), std::streamsize(p.col_idx.size() * sizeof(int32_t)));
    f.write(reinterpret_cast<const char*>(v.data<float>()), std::streamsize(size_t(p.nnz()) * sizeof(float)));
    if (x.defined()) {
      Tensor xc = x.contiguous();
      f.write(reinterpret_cast<const char*>(xc.data<float>()), std::streamsize(size_t(xc.numel()) * sizeof(float)));
    }
    EMBER_CHECK(f.good(), "bench_sparse: writing ", file, " failed (disk full?)");
  }
  std::string spec = dir_ + "/" + id + ".json", out = dir_ + "/" + id + ".out.json";
  {
    json c{{"id", id}, {"op", op}, {"file", file}, {"setup", setup}, {"dense", dense}};
    std::ofstream f(spec);
    f << json{{"warmup", cfg.warmup}, {"repeats", cfg.repeats}, {"min_batch_ms", 2.0}, {"cases", json::array({c})}}.dump(1);
  }
  // The peer's OPENBLAS_CORETYPE (for it alone) is examples/common/openblas_core.h's choice; its
  // thread count matches Ember's. SciPy's sparse kernels are single-threaded C++.
  const ember::bench::peer::PythonPeer& pp = ember::bench::peer::cached_python_peer(python);
  std::string cmd = pp.prefix() + " OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=" +
                    std::to_string(blas_threads) + " '" + python + "' '" + script + "' '" + spec + "' '" + out + "'";
  int rc = std::system(cmd.c_str());
  EMBER_CHECK(rc == 0, "bench_sparse: the SciPy peer failed (exit status ", rc, "): ", cmd);
  std::ifstream f(out);
  EMBER_CHECK(f, "bench_sparse: the SciPy peer wrote no results to ", out);
  json r = json::parse(f);
  version_info = "SciPy " + r["scipy_version"].get<std::string>() + " (NumPy " + r["numpy_version"].get<std::string>() +
                 ", Python " + r["python"].get<std::string>() + ", NumPy's BLAS: " + r["blas"].get<std::string>() + "; OpenBLAS core " + pp.openblas.summary() + ")";
  if (!keep_files)
    for (const std::string& path : {file, spec, out}) std::filesystem::remove(path);
  return r["results"][id];
}

std::string peer_python() { return ember::bench::peer::default_python(); }

}  // namespace bench

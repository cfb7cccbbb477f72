#include "peer.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace ember;

namespace bench {

PeerCases::PeerCases(std::string dir) : dir_(std::move(dir)) { std::filesystem::create_directories(dir_); }

void PeerCases::add(const std::string& id, const std::string& op, const CsrTensor& a, const Tensor& x, bool setup) {
  std::string file = dir_ + "/" + id + ".bin";
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
  cases_.push_back({{"id", id}, {"op", op}, {"file", file}, {"setup", setup}});
}

json PeerCases::run(const std::string& python, const std::string& script, const Config& cfg, bool keep_files) {
  std::string spec = dir_ + "/cases.json", out = dir_ + "/scipy_results.json";
  {
    std::ofstream f(spec);
    f << json{{"warmup", cfg.warmup}, {"repeats", cfg.repeats}, {"min_batch_ms", 2.0}, {"cases", cases_}}.dump(1);
  }
  // OpenBLAS's core-type overrides are unset for the peer alone (they would slow any BLAS call);
  // SciPy's sparse kernels are single-threaded C++ whatever the thread settings.
  std::string cmd = "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 '" + python +
                    "' '" + script + "' '" + spec + "' '" + out + "'";
  int rc = std::system(cmd.c_str());
  EMBER_CHECK(rc == 0, "bench_sparse: the SciPy peer failed (exit status ", rc, "): ", cmd);
  std::ifstream f(out);
  EMBER_CHECK(f, "bench_sparse: the SciPy peer wrote no results to ", out);
  json r = json::parse(f);
  if (!keep_files) {
    for (auto& c : cases_) std::filesystem::remove(c["file"].get<std::string>());
    std::filesystem::remove(spec);
    std::filesystem::remove(out);
  }
  return r;
}

}  // namespace bench

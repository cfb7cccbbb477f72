// The MPI backend: CPU tensors between the processes mpirun started (OpenMPI on Debian). Every
// collective is started non-blocking and then polled against a deadline, so that a rank that
// died or stopped calling collectives becomes an ember::Error here instead of a hang.
#include <cstdlib>
#include <string>

#include "framework/train/dist/backend.h"

#ifdef EMBER_HAS_MPI
#include <mpi.h>

#include "framework/train/dist/poll.h"
#endif

namespace ember::dist {

namespace {
double initial_timeout() {
  const char* e = std::getenv("EMBER_DIST_TIMEOUT_S");
  if (!e || !*e) return 300;
  char* end = nullptr;
  double v = std::strtod(e, &end);
  EMBER_CHECK(end && *end == 0 && v > 0, "EMBER_DIST_TIMEOUT_S='", e, "': expected a positive number of seconds");
  return v;
}
double& timeout_slot() {
  static double t = initial_timeout();
  return t;
}
}  // namespace

void set_timeout_seconds(double seconds) {
  EMBER_CHECK(seconds > 0, "dist::set_timeout_seconds: ", seconds, " is not a positive number of seconds");
  timeout_slot() = seconds;
}
double timeout_seconds() { return timeout_slot(); }

#ifdef EMBER_HAS_MPI
bool mpi_built() { return true; }

namespace {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw Error(str("dist (mpi): ", what, " failed: ", std::string(msg, size_t(len))));
}

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int64: return MPI_INT64_T;
    case DType::Bool: break;  // MPI_C_BOOL takes no MPI_SUM; masks are not communicated yet
    case DType::BFloat16:
    case DType::Float16:  // MPI has no 16-bit float type to sum
      throw Error(str("dist (mpi): ", t, " tensors are not communicated; convert with .to(DType::Float32)"));
  }
  throw Error(str("dist (mpi): ", t, " tensors are not communicated; convert with .to(DType::Int64)"));
}

// Mean = sum / world size, done after the sum (MPI has no mean).
void divide(const Tensor& t, int world) {
  EMBER_DISPATCH_FLOAT(t.dtype(), "all_reduce mean", [&] {
    scalar_t* p = static_cast<scalar_t*>(t.raw_data());
    const scalar_t inv = scalar_t(1) / scalar_t(world);
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] *= inv;
  });
}

// Waits for `req` until the deadline (framework/train/dist/poll.h says how it spins, yields and naps).
void wait_request(MPI_Request& req, const char* what) {
  const bool done = poll_until(
      [&] {
        int flag = 0;
        check_mpi(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), what);
        return flag != 0;
      },
      timeout_seconds());
  if (!done)
    throw Error(str("dist (mpi): ", what, " got no answer from the other ranks within ", timeout_seconds(),
                    " s (did a rank die, or stop calling the same collectives in the same order?); the "
                    "job cannot continue (EMBER_DIST_TIMEOUT_S sets the limit)"));
}

class MpiWork : public Work {
 public:
  MpiWork(MPI_Request req, Tensor mean_of, int world, const char* what)
      : req_(req), mean_of_(std::move(mean_of)), world_(world), what_(what) {}
  ~MpiWork() override {
    // A request dropped unfinished (an exception elsewhere) must still complete before its buffer goes.
    if (!done_) try { wait(); } catch (...) {}
  }
  void wait() override {
    if (done_) return;
    done_ = true;
    wait_request(req_, what_);
    if (mean_of_.defined()) divide(mean_of_, world_);
  }
  bool test() override {
    if (done_) return true;
    int flag = 0;
    check_mpi(MPI_Test(&req_, &flag, MPI_STATUS_IGNORE), what_);
    if (!flag) return false;
    done_ = true;
    if (mean_of_.defined()) divide(mean_of_, world_);
    return true;
  }

 private:
  MPI_Request req_;
  Tensor mean_of_;
  int world_;
  const char* what_;
  bool done_ = false;
};

class MpiBackend : public Backend {
 public:
  MpiBackend() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      // FUNNELED: OpenMP threads compute, only the main thread talks to MPI.
      check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    }
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    // Errors come back as return codes (and so as ember::Error) instead of aborting silently.
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &world_), "MPI_Comm_size");
  }
  std::string name() const override { return "mpi"; }
  bool serves(Device d) const override { return d == Device::CPU; }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }

  void all_reduce(const Tensor& t, ReduceOp op) override { all_reduce_async(t, op)->wait(); }
  std::unique_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op) override {
    MPI_Request req;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, t.raw_data(), int(t.numel()), mpi_type(t.dtype()), MPI_SUM, comm_, &req),
              "all_reduce");
    return std::make_unique<MpiWork>(req, op == ReduceOp::Mean ? t : Tensor(), world_, "all_reduce");
  }
  void broadcast(const Tensor& t, int root) override {
    MPI_Request req;
    check_mpi(MPI_Ibcast(t.raw_data(), int(t.numel()), mpi_type(t.dtype()), root, comm_, &req), "broadcast");
    MpiWork(req, Tensor(), world_, "broadcast").wait();
  }
  void all_gather(const Tensor& in, const Tensor& out) override {
    MPI_Request req;
    const MPI_Datatype dt = mpi_type(in.dtype());
    check_mpi(MPI_Iallgather(in.raw_data(), int(in.numel()), dt, out.raw_data(), int(in.numel()), dt, comm_, &req),
              "all_gather");
    MpiWork(req, Tensor(), world_, "all_gather").wait();
  }
  void reduce_scatter(const Tensor& in, const Tensor& out, ReduceOp op) override {
    MPI_Request req;
    check_mpi(MPI_Ireduce_scatter_block(in.raw_data(), out.raw_data(), int(out.numel()), mpi_type(in.dtype()), MPI_SUM,
                                        comm_, &req),
              "reduce_scatter");
    MpiWork(req, op == ReduceOp::Mean ? out : Tensor(), world_, "reduce_scatter").wait();
  }
  void barrier() override {
    MPI_Request req;
    check_mpi(MPI_Ibarrier(comm_, &req), "barrier");
    MpiWork(req, Tensor(), world_, "barrier").wait();
  }
  void finalize() override {
    if (finalized_) return;
    finalized_ = true;
    MPI_Comm_free(&comm_);
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  }
  [[noreturn]] void abort(int code) override {
    std::fflush(nullptr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, world_ = 1;
  bool finalized_ = false;
};

}  // namespace

std::shared_ptr<Backend> make_mpi_backend() {
  // MPI can be initialised once per process; every communicator shares this one.
  static std::shared_ptr<Backend> b = std::make_shared<MpiBackend>();
  return b;
}

#else
bool mpi_built() { return false; }

std::shared_ptr<Backend> make_mpi_backend() {
  throw Error("dist: the MPI backend was asked for, but this Ember was built without MPI (expected a build "
              "configured with -DEMBER_MPI=ON or AUTO where libopenmpi-dev is installed)");
}
#endif

}  // namespace ember::dist

#include "framework/train/dist/communicator.h"

#include <climits>
#include <cstdlib>
#include <vector>

namespace ember::dist {

namespace {
// What the ranks compare before a collective: dtype, device, rank count of dims, then the dims
// (first kMaxDims; a hash of any further ones in the last slot).
constexpr int kMaxDims = 6;
constexpr int kSigLen = 3 + kMaxDims + 1;

std::vector<int64_t> signature(const Tensor& t) {
  std::vector<int64_t> s(kSigLen, -1);
  s[0] = int64_t(t.dtype());
  s[1] = int64_t(t.device());
  s[2] = t.dim();
  uint64_t h = 1469598103934665603ull;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < kMaxDims) s[size_t(3 + d)] = t.size(d);
    else h = (h ^ uint64_t(t.size(d))) * 1099511628211ull;
  }
  s[kSigLen - 1] = int64_t(h >> 1);
  return s;
}

std::string describe(const int64_t* s) {
  std::string shape = "[";
  for (int64_t d = 0; d < s[2] && d < kMaxDims; ++d) shape += (d ? ", " : "") + std::to_string(s[3 + d]);
  if (s[2] > kMaxDims) shape += ", ...";
  shape += "]";
  return str(name(DType(s[0])), " ", name(Device(s[1])), " tensor of shape ", shape);
}
}  // namespace

Communicator::Communicator(std::shared_ptr<Backend> cpu, std::shared_ptr<Backend> cuda)
    : cpu_(std::move(cpu)), cuda_(std::move(cuda)) {
  EMBER_CHECK(cpu_, "dist::Communicator: the CPU backend is null (expected make_local_backend() or make_mpi_backend())");
  // A backend for CUDA tensors only belongs in the second slot; the first may serve no tensors at
  // all (make_gpu_only_backend: ranks started without MPI), then it explains why CPU tensors fail.
  EMBER_CHECK(cpu_->serves(Device::CPU) || !cpu_->serves(Device::CUDA), "dist::Communicator: backend '", cpu_->name(),
              "' does not serve CPU tensors (expected it as the CUDA backend, the second argument)");
  rank_ = cpu_->rank();
  world_ = cpu_->world_size();
  if (cuda_) {
    EMBER_CHECK(cuda_->serves(Device::CUDA), "dist::Communicator: backend '", cuda_->name(),
                "' does not serve CUDA tensors");
    EMBER_CHECK(cuda_->rank() == rank_ && cuda_->world_size() == world_, "dist::Communicator: the CUDA backend is rank ",
                cuda_->rank(), " of ", cuda_->world_size(), ", the CPU backend rank ", rank_, " of ", world_,
                " (expected the same ranks)");
  }
}

Communicator::Communicator(std::shared_ptr<Backend> cpu, std::function<std::shared_ptr<Backend>()> make_cuda)
    : Communicator(std::move(cpu), std::shared_ptr<Backend>()) {
  make_cuda_ = std::move(make_cuda);
}

std::string Communicator::backend_name(Device d) const {
  if (d == Device::CPU) return cpu_->name();
  if (cuda_) return cuda_->name();
  if (make_cuda_) return "nccl (starts at the first CUDA collective)";
  return world_ == 1 ? cpu_->name() : "none";
}

Backend* Communicator::cuda_backend(const char* op) {
  if (!cuda_ && make_cuda_) {
    cuda_ = make_cuda_();
    make_cuda_ = nullptr;
    EMBER_CHECK(cuda_ && cuda_->serves(Device::CUDA) && cuda_->rank() == rank_ && cuda_->world_size() == world_,
                "dist ", op, ": the CUDA backend started does not serve CUDA tensors on the same ranks");
  }
  return cuda_.get();
}

Backend& Communicator::control(const char* op) {
  if (cpu_->serves(Device::CPU)) return *cpu_;
  if (Backend* b = cuda_backend(op)) return *b;
  return *cpu_;  // its collectives throw, saying why
}

Backend& Communicator::backend_for(const Tensor& t, const char* op) {
  EMBER_CHECK(!finalized_, "dist ", op, ": the communicator was finalized");
  EMBER_CHECK(t.defined(), "dist ", op, ": the tensor is undefined");
  EMBER_CHECK(t.is_contiguous(), "dist ", op, ": the tensor (shape ", to_string(t.shape()),
              ") is not contiguous; pass t.contiguous() (collectives work on a tensor's storage in place)");
  EMBER_CHECK(t.numel() <= INT_MAX, "dist ", op, ": ", t.numel(), " elements, expected at most ", INT_MAX,
              " per collective (split the tensor)");
  if (t.device() == Device::CPU) {
    if (!cpu_->serves(Device::CPU)) throw Error(str("dist ", op, ": ", cpu_->unserved(Device::CPU)));
    return *cpu_;
  }
  if (Backend* b = cuda_backend(op)) return *b;
  // World size 1 needs no transport: the local backend copies between any devices.
  if (world_ == 1 && cpu_->serves(Device::CUDA)) return *cpu_;
  throw Error(str("dist ", op, ": a ", t.device(), " tensor, but no backend for ", t.device(), " tensors is running (",
                  nccl_built() ? "dist::init() was called with cuda = \"none\", or found no GPU"
                               : "this Ember was built without NCCL; expected CPU tensors, or a build with "
                                 "EMBER_NCCL and CUDA",
                  ")"));
}

void Communicator::check_same_everywhere(const Tensor& t, const char* op) {
  if (!verify_ || world_ == 1) return;
  std::vector<int64_t> mine = signature(t);
  Tensor all = zeros({int64_t(world_) * kSigLen}, DType::Int64);
  try {
    Backend& b = control(op);
    if (b.serves(Device::CPU)) {
      b.all_gather(from_vector(mine), all);
    } else {  // ranks joined by NCCL alone: the signatures travel on the GPU
      Tensor on_gpu = zeros({int64_t(world_) * kSigLen}, DType::Int64, Device::CUDA);
      b.all_gather(from_vector(mine).to(Device::CUDA), on_gpu);
      all = on_gpu.to(Device::CPU);
    }
  } catch (const Error& e) {
    throw Error(str("dist ", op, " (comparing shapes across ranks first): ", e.what()));
  }
  const int64_t* a = all.data<int64_t>();
  for (int r = 0; r < world_; ++r)
    for (int k = 0; k < kSigLen; ++k)
      if (a[r * kSigLen + k] != a[k])
        throw Error(str("dist ", op, ": rank 0 passed a ", describe(a), " but rank ", r, " a ",
                        describe(a + r * kSigLen), " (expected the same shape, dtype and device on every rank)"));
}

void Communicator::all_reduce(const Tensor& t, ReduceOp op) { all_reduce_async(t, op)->wait(); }

std::unique_ptr<Work> Communicator::all_reduce_async(const Tensor& t, ReduceOp op) {
  Tensor raw = t.defined() ? t.detach() : t;
  Backend& b = backend_for(raw, "all_reduce");
  EMBER_CHECK(op == ReduceOp::Sum || is_floating(raw.dtype()), "dist all_reduce: mean of an ", raw.dtype(),
              " tensor (expected float32 or float64 for mean, or ReduceOp::Sum)");
  check_same_everywhere(raw, "all_reduce");
  if (world_ == 1) return std::make_unique<DoneWork>();
  return b.all_reduce_async(raw, op);
}

void Communicator::broadcast(const Tensor& t, int root) {
  Tensor raw = t.defined() ? t.detach() : t;
  Backend& b = backend_for(raw, "broadcast");
  EMBER_CHECK(root >= 0 && root < world_, "dist broadcast: root ", root, " is not a rank (expected 0 to ", world_ - 1, ")");
  check_same_everywhere(raw, "broadcast");
  if (world_ > 1) b.broadcast(raw, root);
}

Tensor Communicator::all_gather(const Tensor& t) {
  Tensor raw = t.defined() ? t.detach() : t;
  Backend& b = backend_for(raw, "all_gather");
  check_same_everywhere(raw, "all_gather");
  Shape out_shape = raw.shape();
  if (out_shape.empty()) out_shape = {int64_t(world_)};
  else out_shape[0] *= world_;
  Tensor out = empty(out_shape, raw.dtype(), raw.device());
  b.all_gather(raw, out);
  return out;
}

Tensor Communicator::reduce_scatter(const Tensor& t, ReduceOp op) {
  Tensor raw = t.defined() ? t.detach() : t;
  Backend& b = backend_for(raw, "reduce_scatter");
  EMBER_CHECK(raw.dim() >= 1 && raw.size(0) % world_ == 0, "dist reduce_scatter: shape ", to_string(raw.shape()),
              ", expected a first dimension that is a multiple of the world size ", world_);
  EMBER_CHECK(op == ReduceOp::Sum || is_floating(raw.dtype()), "dist reduce_scatter: mean of an ", raw.dtype(),
              " tensor (expected float32 or float64 for mean, or ReduceOp::Sum)");
  check_same_everywhere(raw, "reduce_scatter");
  Shape out_shape = raw.shape();
  out_shape[0] /= world_;
  Tensor out = empty(out_shape, raw.dtype(), raw.device());
  b.reduce_scatter(raw, out, op);
  return out;
}

void Communicator::barrier() {
  EMBER_CHECK(!finalized_, "dist barrier: the communicator was finalized");
  if (world_ > 1) control("barrier").barrier();
}

void Communicator::finalize() {
  if (finalized_) return;
  finalized_ = true;
  cuda_.reset();  // NCCL's communicator goes before MPI, which may have handed out its id
  cpu_->finalize();
}

void Communicator::abort(int code) {
  cpu_->abort(code);
  std::_Exit(code);  // not reached: backends end the process
}

}  // namespace ember::dist

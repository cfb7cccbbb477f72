// The CUDA attention kernels on a real GPU against the CPU kernels; skipped without one.
#include "examples/attention/study/study_kernels.h"
#include "ops/attention/attention.h"
#include "study_kernels.h"
#include "test_util.h"

#ifdef EMBER_HAS_CUDA
#include <cuda_runtime.h>

#include "ops/attention/cuda/attention_cuda.h"
#endif

using namespace ember;
using namespace ember::testing;

#ifdef EMBER_HAS_CUDA
namespace {

template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceBuffer(size_t count) : n(count) {
    EMBER_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T)) == cudaSuccess, "cudaMalloc failed");
  }
  DeviceBuffer(const Tensor& host) : DeviceBuffer(size_t(host.numel())) {
    Tensor c = host.contiguous();
    EMBER_CHECK(cudaMemcpy(p, c.data<T>(), n * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy failed");
  }
  ~DeviceBuffer() { cudaFree(p); }
  Tensor to_host(const Shape& shape) const {
    Tensor t = empty(shape, dtype_of<T>::value);
    EMBER_CHECK(cudaMemcpy(t.data<T>(), p, n * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy failed");
    return t;
  }
};

template <class T>
void check_device(int64_t bh, int64_t nq, int64_t nk, int64_t d, bool causal, double tol) {
  SCOPED_TRACE(str("bh=", bh, " nq=", nq, " nk=", nk, " d=", d, " causal=", causal));
  DType dt = dtype_of<T>::value;
  Tensor q = random({bh, nq, d}, 1).to(dt), k = random({bh, nk, d}, 2).to(dt), v = random({bh, nk, d}, 3).to(dt),
         dout = random({bh, nq, d}, 4).to(dt);
  AttentionOptions o;
  o.causal = causal;
  ember::testing::register_study_kernels();  // the reference: the study's Algorithm 0 in float64 on the CPU
  o.impl = "standard";
  AttentionForward ref = attention_forward(q.to(DType::Float64), k.to(DType::Float64), v.to(DType::Float64), o);
  AttentionGrads gref = attention_study::attention_backward_standard(
      q.to(DType::Float64), k.to(DType::Float64), v.to(DType::Float64), ref.out, ref.saved, dout.to(DType::Float64), o);
  cuda_attn::Dims dm{bh, nq, nk, d, 1.0 / std::sqrt(double(d)), causal};
  DeviceBuffer<T> dq_(q), dk_(k), dv_(v), ddo(dout), out(size_t(bh * nq * d)), lse(size_t(bh * nq)),
      gq(size_t(bh * nq * d)), gk(size_t(bh * nk * d)), gv(size_t(bh * nk * d)), p(size_t(bh * nq * nk)),
      ds(size_t(bh * nq * nk));
  for (const std::string impl : {"flash", "standard"}) {
    if (impl == "flash") {
      cuda_attn::flash_forward<T>(dm, dq_.p, dk_.p, dv_.p, out.p, lse.p);
      cuda_attn::flash_backward<T>(dm, dq_.p, dk_.p, dv_.p, out.p, lse.p, ddo.p, gq.p, gk.p, gv.p);
    } else {
      cuda_attn::standard_forward<T>(dm, dq_.p, dk_.p, dv_.p, p.p, out.p, lse.p);
      cuda_attn::standard_backward<T>(dm, dq_.p, dk_.p, dv_.p, out.p, p.p, ddo.p, ds.p, gq.p, gk.p, gv.p);
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(all_close(out.to_host({bh, nq, d}), ref.out, tol, tol * 10)) << impl << " out";
    EXPECT_TRUE(all_close(lse.to_host({bh, nq}), ref.lse, tol, tol * 10)) << impl << " lse";
    EXPECT_TRUE(all_close(gq.to_host({bh, nq, d}), gref.dq, tol, tol * 10)) << impl << " dq";
    EXPECT_TRUE(all_close(gk.to_host({bh, nk, d}), gref.dk, tol, tol * 10)) << impl << " dk";
    EXPECT_TRUE(all_close(gv.to_host({bh, nk, d}), gref.dv, tol, tol * 10)) << impl << " dv";
  }
}

}  // namespace
#endif

TEST(AttentionCuda, KernelsMatchTheCpuReference) {
#ifndef EMBER_HAS_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  if (!cuda_attn::available()) GTEST_SKIP() << "no usable GPU";
  for (bool causal : {false, true}) {
    check_device<double>(3, 33, 33, 5, causal, 1e-11);
    check_device<double>(2, 129, 129, 64, causal, 1e-11);
    check_device<double>(1, 7, 40, 100, causal, 1e-11);
    check_device<float>(2, 300, 300, 128, causal, 3e-5);
  }
#endif
}

TEST(AttentionCuda, EveryCudaNameRunsThroughTheOp) {
  // attention() on CUDA tensors under each name it has there ("" and "auto": the flash kernel,
  // also "flash" and "flash2"; "standard": cuBLAS with P): forward and VJP against the CPU's, and
  // attention_backward with and without the saved P.
#ifndef EMBER_HAS_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  if (!cuda_attn::available()) GTEST_SKIP() << "no usable GPU";
  Tensor q = random({2, 3, 37, 16}, 11), k = random({2, 3, 45, 16}, 12), v = random({2, 3, 45, 16}, 13),
         w = random({2, 3, 37, 16}, 14);
  for (bool causal : {false, true}) {
    AttentionOptions cpu_o;
    cpu_o.causal = causal;
    auto [ys, vjp] = make_vjp(
        [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention(x[0], x[1], x[2], cpu_o)}; }, {q, k, v});
    std::vector<Tensor> g = vjp({w});
    for (const char* impl : {"", "auto", "flash", "flash2", "standard"}) {
      SCOPED_TRACE(str("impl '", impl, "' causal=", causal));
      AttentionOptions o = cpu_o;
      o.impl = impl;
      std::vector<Tensor> dev = {q.to(Device::CUDA), k.to(Device::CUDA), v.to(Device::CUDA)};
      auto [ysd, vjpd] = make_vjp(
          [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention(x[0], x[1], x[2], o)}; }, dev);
      std::vector<Tensor> gd = vjpd({w.to(Device::CUDA)});
      EXPECT_TRUE(all_close(ysd[0].to(Device::CPU), ys[0], 1e-11, 1e-9)) << "out";
      for (int i = 0; i < 3; ++i) EXPECT_TRUE(all_close(gd[i].to(Device::CPU), g[i], 1e-11, 1e-9)) << "grad " << i;
      AttentionForward f = attention_forward(dev[0], dev[1], dev[2], o);
      EXPECT_EQ(f.saved.defined(), std::string(impl) == "standard");
      for (const Tensor& saved : {f.saved, Tensor()}) {
        AttentionGrads gb = attention_backward(dev[0], dev[1], dev[2], f.out, f.lse, saved, w.to(Device::CUDA), o);
        EXPECT_TRUE(all_close(gb.dq.to(Device::CPU), g[0], 1e-11, 1e-9)) << "attention_backward dq";
        EXPECT_TRUE(all_close(gb.dv.to(Device::CPU), g[2], 1e-11, 1e-9)) << "attention_backward dv";
      }
    }
  }
#endif
}

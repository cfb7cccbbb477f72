// The CUDA attention kernels' phases (ops/attention/cuda/flash_kernel.h) run on the CPU by a block
// emulator: for each block, every thread's phase runs before any thread's next phase, which is
// what __syncthreads() guarantees on the GPU. Shared memory starts as NaN, so reading a value no
// thread wrote poisons the result. Checked against the float64 CPU reference on awkward shapes.
#include <cstring>
#include <memory>

#include "examples/attention/study/study_kernels.h"
#include "ops/attention/attention.h"
#include "ops/attention/cuda/flash_kernel.h"
#include "study_kernels.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;
using namespace ember::cuda_attn::kern;

namespace {

template <class S>
std::unique_ptr<S> poisoned_shared() {
  auto sh = std::make_unique<S>();
  std::memset(static_cast<void*>(sh.get()), 0xff, sizeof(S));  // all-ones bytes: NaN in float and double
  return sh;
}

template <class T>
cuda_attn::kern::Args<T> dims(int64_t nq, int64_t nk, int64_t d, bool causal) {
  cuda_attn::kern::Args<T> a;
  a.nq = nq;
  a.nk = nk;
  a.d = d;
  a.scale = T(1.0 / std::sqrt(double(d)));
  a.causal = causal;
  return a;
}

// fuse_phases: run scores and update back to back per thread, as if the barrier between them were
// missing (the test that shows the emulator catches it).
template <class K, class T>
void emulate_forward(const cuda_attn::kern::Args<T>& a, int64_t bh, bool fuse_phases = false) {
  const int blocks = int((a.nq + 31) / 32);
  for (int by = 0; by < bh; ++by)
    for (int bx = 0; bx < blocks; ++bx) {
      auto sh = poisoned_shared<typename K::Shared>();
      std::vector<typename K::Regs> rg(K::THREADS);
      const Dim block{bx, by};
      for (int t = 0; t < K::THREADS; ++t) K::init(a, *sh, rg[t], block, Dim{t, 0});
      for (int j = 0; j < K::col_blocks(a, block); ++j) {
        for (int t = 0; t < K::THREADS; ++t) K::load_kv(a, *sh, block, Dim{t, 0}, j);
        if (fuse_phases) {
          for (int t = 0; t < K::THREADS; ++t) {
            K::scores(a, *sh, block, Dim{t, 0}, j);
            K::update(a, *sh, rg[t], Dim{t, 0});
          }
          continue;
        }
        for (int t = 0; t < K::THREADS; ++t) K::scores(a, *sh, block, Dim{t, 0}, j);
        for (int t = 0; t < K::THREADS; ++t) K::update(a, *sh, rg[t], Dim{t, 0});
      }
      for (int t = 0; t < K::THREADS; ++t) K::store(a, rg[t], block, Dim{t, 0});
    }
}

template <class T>
void emulate_rowdot(const cuda_attn::kern::Args<T>& a, int64_t rows) {
  using K = RowDot<T>;
  for (int bx = 0; bx < int((rows + K::THREADS - 1) / K::THREADS); ++bx)
    for (int t = 0; t < K::THREADS; ++t) K::run(a, rows, Dim{bx, 0}, Dim{t, 0});
}

template <class KV, class KQ, class T>
void emulate_backward(const cuda_attn::kern::Args<T>& a, int64_t bh) {
  for (int by = 0; by < bh; ++by) {
    for (int bx = 0; bx < int((a.nk + 31) / 32); ++bx) {
      auto sh = poisoned_shared<typename KV::Shared>();
      std::vector<typename KV::Regs> rg(KV::THREADS);
      const Dim block{bx, by};
      for (int t = 0; t < KV::THREADS; ++t) KV::init(a, *sh, rg[t], block, Dim{t, 0});
      for (int i = KV::first_row_block(a, block); i < KV::row_blocks(a); ++i) {
        for (int t = 0; t < KV::THREADS; ++t) KV::load_rows(a, *sh, block, Dim{t, 0}, i);
        for (int t = 0; t < KV::THREADS; ++t) KV::probs(a, *sh, block, Dim{t, 0}, i);
        for (int t = 0; t < KV::THREADS; ++t) KV::accumulate(a, *sh, rg[t], Dim{t, 0});
      }
      for (int t = 0; t < KV::THREADS; ++t) KV::store(a, rg[t], block, Dim{t, 0});
    }
    for (int bx = 0; bx < int((a.nq + 31) / 32); ++bx) {
      auto sh = poisoned_shared<typename KQ::Shared>();
      std::vector<typename KQ::Regs> rg(KQ::THREADS);
      const Dim block{bx, by};
      for (int t = 0; t < KQ::THREADS; ++t) KQ::init(a, *sh, rg[t], block, Dim{t, 0});
      for (int j = 0; j < KQ::col_blocks(a, block); ++j) {
        for (int t = 0; t < KQ::THREADS; ++t) KQ::load_kv(a, *sh, block, Dim{t, 0}, j);
        for (int t = 0; t < KQ::THREADS; ++t) KQ::dscores(a, *sh, block, Dim{t, 0}, j);
        for (int t = 0; t < KQ::THREADS; ++t) KQ::accumulate(a, *sh, rg[t], Dim{t, 0});
      }
      for (int t = 0; t < KQ::THREADS; ++t) KQ::store(a, rg[t], block, Dim{t, 0});
    }
  }
}

struct Shape4 {
  int64_t bh, nq, nk, d;
};

template <class T, int DMAX>
void check_flash(const Shape4& s, bool causal, double tol) {
  SCOPED_TRACE(str("bh=", s.bh, " nq=", s.nq, " nk=", s.nk, " d=", s.d, " DMAX=", DMAX, " causal=", causal, " ",
                   name(dtype_of<T>::value)));
  Tensor q = random({s.bh, s.nq, s.d}, 1), k = random({s.bh, s.nk, s.d}, 2), v = random({s.bh, s.nk, s.d}, 3),
         dout = random({s.bh, s.nq, s.d}, 4);
  AttentionOptions o;
  o.causal = causal;
  ember::testing::register_study_kernels();  // the reference: the study's Algorithm 0 in float64
  o.impl = "standard";
  AttentionForward ref = attention_forward(q, k, v, o);
  AttentionGrads gref = attention_study::attention_backward_standard(q, k, v, ref.out, ref.saved, dout, o);

  DType dt = dtype_of<T>::value;
  Tensor qt = q.to(dt), kt = k.to(dt), vt = v.to(dt), dot = dout.to(dt);
  Tensor out = empty(q.shape(), dt), lse = empty({s.bh, s.nq}, dt);
  cuda_attn::kern::Args<T> a = dims<T>(s.nq, s.nk, s.d, causal);
  a.q = qt.data<T>();
  a.k = kt.data<T>();
  a.v = vt.data<T>();
  a.out = out.data<T>();
  a.out_lse = lse.data<T>();
  emulate_forward<FlashForward<T, DMAX>, T>(a, s.bh);
  EXPECT_TRUE(all_close(out, ref.out, tol, tol * 10)) << "out";
  EXPECT_TRUE(all_close(lse, ref.lse, tol, tol * 10)) << "lse";

  Tensor dvec = empty({s.bh * s.nq}, dt), dq = empty(q.shape(), dt), dk = empty(k.shape(), dt), dv = empty(v.shape(), dt);
  a.o = out.data<T>();
  a.lse = lse.data<T>();
  a.dout = dot.data<T>();
  a.dvec_out = dvec.data<T>();
  emulate_rowdot(a, s.bh * s.nq);
  a.dvec = dvec.data<T>();
  a.dq = dq.data<T>();
  a.dk = dk.data<T>();
  a.dv = dv.data<T>();
  emulate_backward<FlashBackwardKV<T, DMAX>, FlashBackwardQ<T, DMAX>, T>(a, s.bh);
  EXPECT_TRUE(all_close(dq, gref.dq, tol, tol * 10)) << "dq";
  EXPECT_TRUE(all_close(dk, gref.dk, tol, tol * 10)) << "dk";
  EXPECT_TRUE(all_close(dv, gref.dv, tol, tol * 10)) << "dv";
}

}  // namespace

TEST(AttentionEmulator, FlashForwardAndBackwardMatchTheReference) {
  for (bool causal : {false, true}) {
    check_flash<double, 64>({3, 33, 33, 5}, causal, 1e-12);
    check_flash<double, 64>({1, 1, 1, 1}, causal, 1e-12);
    check_flash<double, 64>({2, 70, 70, 64}, causal, 1e-12);
    check_flash<double, 128>({1, 7, 40, 100}, causal, 1e-12);  // Nq != Nk, d not a multiple of TPR
    check_flash<float, 64>({2, 45, 45, 16}, causal, 2e-5);
  }
  check_flash<double, 64>({1, 40, 7, 3}, false, 1e-12);  // more queries than keys
}

TEST(AttentionEmulator, AMissingBarrierIsCaught) {
  // Without the barrier between scores and update, a thread reads S entries its row's other
  // threads have not written yet (NaN-poisoned shared memory), so the output is wrong.
  Tensor q = random({1, 40, 8}, 5), k = random({1, 40, 8}, 6), v = random({1, 40, 8}, 7);
  AttentionOptions o;
  Tensor ref = attention_forward(q, k, v, o).out;
  Tensor out = empty(q.shape(), DType::Float64), lse = empty({1, 40}, DType::Float64);
  cuda_attn::kern::Args<double> a = dims<double>(40, 40, 8, false);
  a.q = q.data<double>();
  a.k = k.data<double>();
  a.v = v.data<double>();
  a.out = out.data<double>();
  a.out_lse = lse.data<double>();
  emulate_forward<FlashForward<double, 64>, double>(a, 1, /*fuse_phases=*/true);
  EXPECT_FALSE(all_close(out, ref, 1e-6, 1e-6));
  emulate_forward<FlashForward<double, 64>, double>(a, 1, false);
  EXPECT_TRUE(all_close(out, ref, 1e-12, 1e-10));
}

TEST(AttentionEmulator, StandardPathSoftmaxKernels) {
  // cuBLAS's S = scale Q K^T is emulated by a CPU matmul; the row softmax and the softmax backward
  // kernels run in the emulator.
  for (bool causal : {false, true}) {
    const int64_t bh = 2, nq = 37, nk = 300, d = 6;
    Tensor q = random({bh, nq, d}, 11), k = random({bh, nk, d}, 12), v = random({bh, nk, d}, 13),
           dout = random({bh, nq, d}, 14);
    AttentionOptions o;
    o.causal = causal;
    ember::testing::register_study_kernels();
    o.impl = "standard";
    AttentionForward ref = attention_forward(q, k, v, o);
    Tensor p = (matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(d)))).contiguous();
    Tensor lse = empty({bh, nq}, DType::Float64);
    cuda_attn::kern::Args<double> a = dims<double>(nq, nk, d, causal);
    a.out_lse = lse.data<double>();
    using K = RowSoftmax<double>;
    for (int by = 0; by < bh; ++by)
      for (int bx = 0; bx < nq; ++bx) {
        auto sh = poisoned_shared<K::Shared>();
        std::vector<K::Regs> rg(K::THREADS);
        for (int t = 0; t < K::THREADS; ++t) K::partial_max(a, p.data<double>(), *sh, Dim{bx, by}, Dim{t, 0});
        for (int t = 0; t < K::THREADS; ++t) K::partial_sum(a, p.data<double>(), *sh, rg[t], Dim{bx, by}, Dim{t, 0});
        for (int t = 0; t < K::THREADS; ++t) K::normalise(a, p.data<double>(), *sh, rg[t], Dim{bx, by}, Dim{t, 0});
      }
    EXPECT_TRUE(all_close(p, ref.saved, 1e-14, 1e-12)) << "P, causal=" << causal;
    EXPECT_TRUE(all_close(lse, ref.lse, 1e-12, 1e-10)) << "L, causal=" << causal;

    // dS = P * (dP - D) with D from the RowDot kernel.
    Tensor dp = matmul(dout, v.transpose(-2, -1)).contiguous(), dvec = empty({bh * nq}, DType::Float64);
    a.o = ref.out.data<double>();
    a.dout = dout.data<double>();
    a.dvec_out = dvec.data<double>();
    emulate_rowdot(a, bh * nq);
    a.dvec = dvec.data<double>();
    const int64_t total = bh * nq * nk;
    Tensor ds = dp.clone();
    for (int bx = 0; bx < int((total + 255) / 256); ++bx)
      for (int t = 0; t < 256; ++t) SoftmaxBackward<double>::run(a, p.data<double>(), ds.data<double>(), total, Dim{bx, 0}, Dim{t, 0});
    Tensor expect = ref.saved * (dp - sum(dout * ref.out, {-1}, true));
    EXPECT_TRUE(all_close(ds, expect, 1e-12, 1e-10)) << "dS, causal=" << causal;
  }
}

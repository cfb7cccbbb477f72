// The attention study's byte counters (examples/attention/study/io_counters.h): the traffic of the
// paper's Algorithms 0 and 1, forward and backward, and the unfused steps in another loop order.
#include <chrono>

#include "examples/attention/study/io_counters.h"
#include "framework/core/parallel.h"
#include "ops/attention/attention_test_util.h"

using namespace ember;
using namespace ember::testing;
using namespace attention_test;

TEST(Attention, ByteCountersMatchTheAlgorithms) {
  const int64_t n = 256, d = 16, m = 1024;  // Bc = 16, Br = 16: Tr = Tc = 16
  Tensor q = random({1, 1, n, d}, 71).to(DType::Float32), k = random({1, 1, n, d}, 72).to(DType::Float32),
         v = random({1, 1, n, d}, 73).to(DType::Float32);
  auto count = [&](const std::string& impl) {
    attention_study::reset_attention_io();
    attention_study::set_attention_io_counting(true);
    attention_forward(q, k, v, opts(impl, false, m));
    attention_study::set_attention_io_counting(false);
    return attention_study::attention_io();
  };
  attention_study::AttentionIo f = count("flash"), s = count("standard");
  const int64_t tr = n / 16, tc = n / 16;
  attention_study::Problem<float> pr;
  pr.nq = pr.nk = n;
  pr.d = d;
  pr.br = pr.bc = 16;
  const int64_t per = attention_study::flash_row_blocks_per_task(pr), chunks = (tr + per - 1) / per;
  // Algorithm 1: each task reads K and V once; every column block reads Q_i, O_i, m_i, l_i and writes
  // O_i, m_i, l_i back; plus the initialisation and the final normalisation.
  EXPECT_EQ(f.read_bytes, 4 * (chunks * 2 * n * d + tc * (2 * n * d + 2 * n) + n * (d + 2)));
  EXPECT_EQ(f.write_bytes, 4 * (n * (d + 2) + tc * (n * d + 2 * n) + n * (d + 1)));
  // Standard writes S and P (N^2 each) and reads them back.
  EXPECT_GE(s.write_bytes, 4 * 2 * n * n);
  EXPECT_GE(s.read_bytes, 4 * 2 * n * n);
  EXPECT_LT(f.read_bytes + f.write_bytes, s.read_bytes + s.write_bytes);
  // Off: nothing counted.
  attention_study::reset_attention_io();
  attention_forward(q, k, v, opts("flash", false, m));
  EXPECT_EQ(attention_study::attention_io().read_bytes, 0);
  // The library's kernel is not instrumented.
  attention_study::AttentionIo f2 = count("flash2");
  EXPECT_EQ(f2.read_bytes + f2.write_bytes, 0);
}

TEST(Attention, UnfusedIsTheStandardStepsInAnotherLoopOrder) {
  // Same steps, same arithmetic, so the same bits and the same counted bytes; only the order of
  // the strips differs (each step over all of them before the next). Causal, several heads, a
  // budget whose blocks do not divide N.
  for (bool causal : {false, true}) {
    Tensor q = random({2, 3, 77, 12}, 81).to(DType::Float32), k = random({2, 3, 77, 12}, 82).to(DType::Float32),
           v = random({2, 3, 77, 12}, 83).to(DType::Float32);
    auto run = [&](const std::string& impl) {
      attention_study::reset_attention_io();
      attention_study::set_attention_io_counting(true);
      AttentionForward f = attention_forward(q, k, v, opts(impl, causal, 300));
      attention_study::set_attention_io_counting(false);
      return std::make_pair(f, attention_study::attention_io());
    };
    auto [s, sio] = run("standard");
    auto [u, uio] = run("unfused");
    EXPECT_EQ(s.out.to_vector<float>(), u.out.to_vector<float>()) << causal;
    EXPECT_EQ(s.lse.to_vector<float>(), u.lse.to_vector<float>()) << causal;
    EXPECT_EQ(s.saved.to_vector<float>(), u.saved.to_vector<float>()) << causal;  // P, for the backward
    EXPECT_EQ(sio.read_bytes, uio.read_bytes);
    EXPECT_EQ(sio.write_bytes, uio.write_bytes);
    EXPECT_GT(uio.read_bytes, 0);
  }
  // Its step times are recorded, each one measured.
  Tensor q = random({1, 1, 512, 32}, 84).to(DType::Float32);
  auto t0 = std::chrono::steady_clock::now();
  attention(q, q, q, opts("unfused", false));
  double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  attention_study::AttentionPhaseTimes t = attention_study::last_unfused_phase_times();
  EXPECT_GT(t.scores_ms, 0);
  EXPECT_GT(t.softmax_ms, 0);
  EXPECT_GT(t.output_ms, 0);
  EXPECT_LE(t.scores_ms + t.softmax_ms + t.output_ms, wall);
}

TEST(Attention, BackwardByteCountersMatchTheAlgorithms) {
  // One thread, so that Algorithm 1's backward flushes its private dQ once; non-causal, N = n.
  const int saved = num_threads();
  set_num_threads(1);
  const int64_t n = 256, d = 16, m = 1024;  // Bc = 16, Br = 16: Tr = Tc = 16
  Tensor q = random({1, 1, n, d}, 75).to(DType::Float32), k = random({1, 1, n, d}, 76).to(DType::Float32),
         v = random({1, 1, n, d}, 77).to(DType::Float32), dout = random({1, 1, n, d}, 78).to(DType::Float32);
  auto count = [&](const std::string& impl) {
    AttentionOptions o = opts(impl, false, m);
    AttentionForward f = attention_forward(q, k, v, o);
    attention_study::reset_attention_io();
    attention_study::set_attention_io_counting(true);
    if (impl == "standard") attention_study::attention_backward_standard(q, k, v, f.out, f.saved, dout, o);
    else attention_study::attention_backward_flash(q, k, v, f.out, f.lse, dout, o);
    attention_study::set_attention_io_counting(false);
    return attention_study::attention_io();
  };
  attention_study::AttentionIo f = count("flash"), s = count("standard");
  set_num_threads(saved);
  const int64_t tc = n / 16, strips = n / 16, nd = n * d;
  // Algorithm 1: D = rowsum(dO * O) reads dO and O; the column blocks read K and V once; every
  // (column block, row block) pair reads Q_i, dO_i, L_i, D_i and reads and writes dQ_i; dK_j, dV_j
  // are written once; the private dQ is added into dQ once (read both, write one).
  EXPECT_EQ(f.read_bytes, 4 * (2 * nd + 2 * nd + tc * (2 * nd + 2 * n) + tc * nd + 2 * nd));
  EXPECT_EQ(f.write_bytes, 4 * (n + tc * nd + 2 * nd + nd));
  // Algorithm 0: D; by row strips dP = dO V^T is written (reading dO_i and all of V), dS = P * (dP - D)
  // reads P and dP and writes dS, dQ = dS K reads dS and K; by column strips dV = P^T dO and
  // dK = dS^T Q read P, dS, dO and Q and write dK, dV.
  EXPECT_EQ(s.read_bytes, 4 * (2 * nd + nd + 2 * strips * nd + 3 * n * n + n + 2 * n * n + 2 * strips * nd));
  EXPECT_EQ(s.write_bytes, 4 * (n + 2 * n * n + nd + 2 * nd));
  // Algorithm 0's backward moves 7 N^2 floats of P, dP and dS; Algorithm 1's has no N^2 term, only
  // Tc (3 N d + 2 N), which is smaller as long as 3 d Tc < 7 N, i.e. M > 12 d^2 / 7.
  EXPECT_GT(s.read_bytes + s.write_bytes, 4 * 7 * n * n);
  EXPECT_LT(f.read_bytes + f.write_bytes, s.read_bytes + s.write_bytes);
}

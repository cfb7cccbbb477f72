// attention_forward and attention_backward on plain tensors (ops/attention/dispatch.cpp): the
// backward kernels against the composite, K and V read in place from a larger buffer, and the
// memory each variant's forward and backward take.
#include "ops/attention/attention_test_util.h"

using namespace ember;
using namespace ember::testing;
using namespace attention_test;

TEST(Attention, BackwardOpsMatchTheComposite) {
  Tensor q = random({3, 17, 6}, 31), k = random({3, 17, 6}, 32), v = random({3, 17, 6}, 33), dout = random({3, 17, 6}, 34);
  for (bool causal : {false, true}) {
    AttentionOptions os = opts("standard", causal, 48), of = opts("flash", causal, 48);
    AttentionForward fs = attention_forward(q, k, v, os), ff = attention_forward(q, k, v, of);
    EXPECT_FALSE(ff.saved.defined());  // flash never materialises P
    ASSERT_TRUE(fs.saved.defined());
    EXPECT_EQ(fs.saved.shape(), (Shape{3, 17, 17}));
    auto [ys, vjp] = make_vjp(
        [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention_composite(x[0], x[1], x[2], os)}; }, {q, k, v});
    std::vector<Tensor> ref = vjp({dout});
    std::vector<std::pair<std::string, AttentionGrads>> grads = {
        {"standard, P saved", attention_study::attention_backward_standard(q, k, v, fs.out, fs.saved, dout, os)},
        {"standard, P recomputed", attention_study::attention_backward_standard(q, k, v, fs.out, Tensor(), dout, os)},
        {"flash", attention_study::attention_backward_flash(q, k, v, ff.out, ff.lse, dout, of)}};
    // And attention_backward of every variant, from what its own forward saved.
    for (const std::string& impl : impls()) {
      AttentionOptions o = opts(impl, causal, 48);
      AttentionForward f = attention_forward(q, k, v, o);
      grads.push_back({impl, attention_backward(q, k, v, f.out, f.lse, f.saved, dout, o)});
    }
    for (const auto& [what, g] : grads) {
      SCOPED_TRACE(str(what, " causal=", causal));
      EXPECT_TRUE(all_close(g.dq, ref[0], 1e-11, 1e-9));
      EXPECT_TRUE(all_close(g.dk, ref[1], 1e-11, 1e-9));
      EXPECT_TRUE(all_close(g.dv, ref[2], 1e-11, 1e-9));
    }
  }
}

TEST(Attention, KeysAndValuesReadInPlaceFromALargerBuffer) {
  // A KV cache's view: (B, H, capacity, d) storage, the first `len` positions visible; the forward
  // reads it in place (slices a uniform distance apart). Also a view whose heads are not uniformly
  // spaced (a step over heads), which must still be right (copied first), and gradients through both.
  Tensor kbuf = random({2, 3, 20, 4}, 61), vbuf = random({2, 3, 20, 4}, 62);
  Tensor k = kbuf.slice(2, 0, 11), v = vbuf.slice(2, 0, 11);
  Tensor q = random({2, 3, 2, 4}, 63);
  Tensor kbuf5 = random({2, 5, 11, 4}, 64), vbuf5 = random({2, 5, 11, 4}, 65);
  Tensor k_step = kbuf5.slice(1, 0, 5, 2), v_step = vbuf5.slice(1, 0, 5, 2);  // heads 0, 2, 4: B stride != 3 * H stride
  for (const std::string& impl : impls())
    for (bool causal : {false, true}) {
      SCOPED_TRACE(str(impl, " causal=", causal));
      Tensor ref = attention_composite(q, k.contiguous(), v.contiguous(), opts(impl, causal));
      EXPECT_TRUE(all_close(attention(q, k, v, opts(impl, causal, 32)), ref, 1e-12, 1e-10));
      Tensor ref_step = attention_composite(q, k_step.contiguous(), v_step.contiguous(), opts(impl, causal));
      EXPECT_TRUE(all_close(attention(q, k_step, v_step, opts(impl, causal, 32)), ref_step, 1e-12, 1e-10));
      EXPECT_TRUE(all_close(attention(q, k, v_step, opts(impl, causal, 32)),
                            attention_composite(q, k.contiguous(), v_step.contiguous(), opts(impl, causal)), 1e-12, 1e-10));
    }
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& x) { return attention(x[0], x[1].slice(2, 0, 5), x[2].slice(2, 0, 5), opts("flash", true, 32)); },
                      {random({1, 2, 3, 4}, 66), random({1, 2, 8, 4}, 67), random({1, 2, 8, 4}, 68)}));
}

TEST(Attention, FlashNeverAllocatesNByN) {
  const int64_t n = 1024, d = 16;
  Tensor q = random({1, 1, n, d}, 81).to(DType::Float32), k = random({1, 1, n, d}, 82).to(DType::Float32),
         v = random({1, 1, n, d}, 83).to(DType::Float32), dout = random({1, 1, n, d}, 84).to(DType::Float32);
  auto peak_extra = [&](const std::string& impl) {
    int64_t base = memory_stats().current_bytes;
    reset_peak_memory();
    AttentionOptions o = opts(impl, false, 4096);
    auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention(x[0], x[1], x[2], o)}; },
                              {q, k, v});
    vjp({dout});
    return memory_stats().peak_bytes - base;
  };
  int64_t flash = peak_extra("flash"), flash2 = peak_extra("flash2"), standard = peak_extra("standard");
  EXPECT_LT(flash, n * n * 4 / 4) << "flash peak extra bytes";
  // Flash2's packed Q, K, V, dO and per-thread dQ buffers are O(N d), padded to the micro-kernel's
  // width: less than one N x N matrix of floats.
  EXPECT_LT(flash2, n * n * 4) << "flash2 peak extra bytes";
  EXPECT_GE(standard, 2 * n * n * 4) << "standard keeps P and dS";
}

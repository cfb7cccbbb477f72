// Tensor: factories, views sharing storage, element access, dtype conversion,
// in-place writes through views, printing and the caching allocator's statistics.
#include <cmath>
#include <limits>

#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

bool same_storage(const Tensor& a, const Tensor& b) { return a.impl()->storage == b.impl()->storage; }

}  // namespace

// ---------------------------------------------------------------- factories

TEST(TensorFactory, ZerosOnesFull) {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor z = zeros({2, 3}, dt), o = ones({2, 3}, dt), f = full({4}, 7.0, dt);
    EXPECT_EQ(z.shape(), (Shape{2, 3}));
    EXPECT_EQ(z.dtype(), dt);
    EXPECT_EQ(z.strides(), (Shape{3, 1}));
    EXPECT_TRUE(z.is_contiguous());
    for (double v : z.to_vector<double>()) EXPECT_EQ(v, 0.0);
    for (double v : o.to_vector<double>()) EXPECT_EQ(v, 1.0);
    for (double v : f.to_vector<double>()) EXPECT_EQ(v, 7.0);
  }
  Tensor s = scalar(2.5, DType::Float64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item(), 2.5);
  Tensor x = full({3, 1}, -1.5, DType::Float32);
  EXPECT_EQ(zeros_like(x).shape(), x.shape());
  EXPECT_EQ(ones_like(x).dtype(), DType::Float32);
  EXPECT_EQ(full_like(x, 4).to_vector<double>(), (std::vector<double>{4, 4, 4}));
  EXPECT_EQ(zeros({0, 3}).numel(), 0);
}

TEST(TensorFactory, Arange) {
  EXPECT_EQ(arange(5).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(5).dtype(), DType::Int64);
  EXPECT_EQ(arange(2, 9, 3).to_vector<int64_t>(), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(arange(2, 8, 3).to_vector<int64_t>(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(arange(5, 0, -2).to_vector<int64_t>(), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_EQ(arange(5, 0).numel(), 0);
  EXPECT_EQ(arange(0, 5, -1).numel(), 0);
  EXPECT_EQ(arange(3, DType::Float64).to_vector<double>(), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(arange(3, DType::Float64).dtype(), DType::Float64);
  EXPECT_EMBER_ERROR(arange(0, 5, 0), "arange");
}

TEST(TensorFactory, FromVectorRoundTrip) {
  std::vector<float> f = {1.5f, -2.f, 3.25f, 4.f, 5.f, 6.f};
  Tensor t = from_vector(f, {2, 3});
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.to_vector<float>(), f);
  EXPECT_EQ(t.at({1, 0}), 4.0);
  Tensor d = from_vector(std::vector<double>{0.1, 0.2, 0.3});
  EXPECT_EQ(d.shape(), (Shape{3}));
  EXPECT_EQ(d.dtype(), DType::Float64);
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{0.1, 0.2, 0.3}));
  Tensor i = from_vector(std::vector<int64_t>{7, -8}, {2, 1});
  EXPECT_EQ(i.dtype(), DType::Int64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{7, -8}));
  Tensor one = from_vector(std::vector<double>{9.0});
  EXPECT_EQ(one.dim(), 0);  // a single value without a shape is a 0-d tensor
  EXPECT_EQ(one.item(), 9.0);
  EXPECT_EQ(from_vector(std::vector<double>{9.0}, {1}).shape(), (Shape{1}));
  EXPECT_EMBER_ERROR(from_vector(f, {4, 2}), "from_vector");
  EXPECT_EMBER_ERROR(from_vector(f, {4}), "[4]");
  EXPECT_EMBER_ERROR(from_vector(std::vector<double>{1, 2}, {-1, -2}), "from_vector");
}

TEST(TensorFactory, NegativeDimensionIsAnError) { EXPECT_EMBER_ERROR(zeros({2, -3}), "negative"); }

// ---------------------------------------------------------------- random numbers

// ---------------------------------------------------------------- views

TEST(TensorView, ReshapeAndViewShareStorage) {
  Tensor x = arange(12, DType::Float64);
  Tensor v = x.view({3, 4});
  Tensor r = x.reshape({2, -1, 3});
  EXPECT_EQ(r.shape(), (Shape{2, 2, 3}));
  EXPECT_TRUE(same_storage(x, v));
  EXPECT_TRUE(same_storage(x, r));
  v.set({2, 1}, 100);
  EXPECT_EQ(x.at({9}), 100);
  EXPECT_EQ(r.at({1, 1, 0}), 100);
  EXPECT_EQ(x.flatten().shape(), (Shape{12}));
  // reshape of a non-contiguous tensor copies, view refuses.
  Tensor t = x.view({3, 4}).t();
  Tensor c = t.reshape({12});
  EXPECT_FALSE(same_storage(c, x));
  EXPECT_EQ(c.to_vector<double>(), t.to_vector<double>());
  EXPECT_EMBER_ERROR(t.view({12}), "view");
  EXPECT_EMBER_ERROR(x.reshape({5, -1}), "reshape");
  EXPECT_EMBER_ERROR(x.reshape({-1, -1}), "only one dimension");
  EXPECT_EMBER_ERROR(x.view({5, 3}), "[5, 3]");
}

TEST(TensorView, TransposeAndPermute) {
  Tensor x = random({2, 3, 4}, 1);
  Tensor t = x.transpose(0, 2);
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.strides(), (Shape{1, 4, 12}));
  EXPECT_TRUE(same_storage(t, x));
  EXPECT_FALSE(t.is_contiguous());
  Tensor p = x.permute({1, -1, 0});
  EXPECT_EQ(p.shape(), (Shape{3, 4, 2}));
  for_each_index(x.shape(), [&](const Shape& i) {
    EXPECT_EQ(t.at({i[2], i[1], i[0]}), x.at(i));
    EXPECT_EQ(p.at({i[1], i[2], i[0]}), x.at(i));
  });
  x.set({1, 2, 3}, 42);
  EXPECT_EQ(p.at({2, 3, 1}), 42);
  Tensor m = random({3, 5}, 2);
  EXPECT_EQ(m.t().shape(), (Shape{5, 3}));
  EXPECT_EQ(m.t().t().to_vector<double>(), m.to_vector<double>());
  EXPECT_EMBER_ERROR(x.permute({0, 1}), "permute");
  EXPECT_EMBER_ERROR(x.permute({0, 1, 1}), "repeats");
  EXPECT_EMBER_ERROR(x.transpose(0, 3), "transpose");
}

TEST(TensorView, SliceWithStepAndNegativeBounds) {
  Tensor x = arange(20, DType::Float64).reshape({4, 5});
  Tensor s = x.slice(1, 1, 5, 2);  // columns 1 and 3
  EXPECT_EQ(s.shape(), (Shape{4, 2}));
  EXPECT_TRUE(same_storage(s, x));
  EXPECT_EQ(s.offset(), 1);
  EXPECT_EQ(s.strides(), (Shape{5, 2}));
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{1, 3, 6, 8, 11, 13, 16, 18}));
  EXPECT_EQ(x.slice(0, -2, 4).to_vector<double>(), (std::vector<double>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_EQ(x.slice(1, 0, -1, 3).to_vector<double>(), (std::vector<double>{0, 3, 5, 8, 10, 13, 15, 18}));
  EXPECT_EQ(x.slice(1, 2, 100).shape(), (Shape{4, 3}));  // bounds clamp as in Python
  EXPECT_EQ(x.slice(1, 4, 2).shape(), (Shape{4, 0}));
  EXPECT_EQ(x.narrow(0, 1, 2).to_vector<double>(), (std::vector<double>{5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
  // A slice of a slice composes offsets and strides.
  Tensor ss = x.slice(1, 1, 5, 2).slice(0, 1, 4, 2);
  EXPECT_EQ(ss.to_vector<double>(), (std::vector<double>{6, 8, 16, 18}));
  ss.set({1, 1}, -1);
  EXPECT_EQ(x.at({3, 3}), -1);
  EXPECT_EMBER_ERROR(x.slice(1, 0, 2, 0), "step");
  EXPECT_EMBER_ERROR(x.slice(2, 0, 2), "slice");
  EXPECT_EMBER_ERROR(scalar(1.0).slice(0, 0, 1), "slice");
}

TEST(TensorView, ExpandUnsqueezeSqueeze) {
  Tensor x = from_vector(std::vector<double>{1, 2, 3}, {3, 1});
  Tensor e = x.expand({2, 3, 4});
  EXPECT_EQ(e.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(e.strides(), (Shape{0, 1, 0}));
  EXPECT_TRUE(same_storage(e, x));
  for_each_index(e.shape(), [&](const Shape& i) { EXPECT_EQ(e.at(i), double(i[1] + 1)); });
  EXPECT_EQ(x.expand({-1, 2}).shape(), (Shape{3, 2}));
  x.set({1, 0}, 9);
  EXPECT_EQ(e.at({1, 1, 3}), 9);
  EXPECT_EMBER_ERROR(x.expand({3, 4, 2}), "expand");
  EXPECT_EMBER_ERROR(x.expand({2}), "expand");
  EXPECT_EMBER_ERROR(x.expand({-1, 3, 2}), "expand");  // -1 only keeps an existing dimension
  EXPECT_EMBER_ERROR(x.expand({-2, 3, 2}), "expand");

  Tensor v = random({2, 3}, 3);
  Tensor u0 = v.unsqueeze(0), u2 = v.unsqueeze(2), um = v.unsqueeze(-1);
  EXPECT_EQ(u0.shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(u2.shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(um.shape(), (Shape{2, 3, 1}));
  EXPECT_TRUE(u0.is_contiguous() && u2.is_contiguous());
  EXPECT_TRUE(same_storage(u2, v));
  EXPECT_EQ(u2.squeeze(2).shape(), (Shape{2, 3}));
  EXPECT_EQ(u0.squeeze(0).to_vector<double>(), v.to_vector<double>());
  // unsqueeze of a transposed view keeps addressing the same elements.
  Tensor tu = v.t().unsqueeze(1);
  for_each_index(tu.shape(), [&](const Shape& i) { EXPECT_EQ(tu.at(i), v.at({i[2], i[0]})); });
  EXPECT_EMBER_ERROR(v.squeeze(0), "squeeze");
  EXPECT_EMBER_ERROR(v.unsqueeze(4), "unsqueeze");
}

TEST(TensorView, ZeroDimEdgeCases) {
  Tensor s = scalar(3.0, DType::Float64);
  EXPECT_EQ(s.unsqueeze(0).shape(), (Shape{1}));
  EXPECT_EQ(s.reshape({1, 1}).shape(), (Shape{1, 1}));
  EXPECT_EQ(s.transpose(0, 0).item(), 3.0);   // a 0-d tensor is its own transpose
  EXPECT_EQ(s.squeeze(0).item(), 3.0);         // and squeezing it is a no-op
  EXPECT_EQ(s.permute({}).item(), 3.0);
  EXPECT_EMBER_ERROR(s.transpose(0, 1), "transpose");
}

TEST(TensorView, Contiguous) {
  Tensor x = random({3, 4}, 4);
  EXPECT_EQ(x.contiguous().impl(), x.impl());  // already contiguous: the same tensor
  Tensor t = x.t();
  Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_FALSE(same_storage(c, x));
  EXPECT_EQ(c.strides(), (Shape{3, 1}));
  EXPECT_EQ(c.to_vector<double>(), t.to_vector<double>());
  Tensor e = random({1, 4}, 5).expand({3, 4}).contiguous();
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_EQ(e.at({2, 3}), e.at({0, 3}));
  Tensor k = x.clone();
  EXPECT_FALSE(same_storage(k, x));
  k.set({0, 0}, 1e3);
  EXPECT_NE(x.at({0, 0}), 1e3);
}

// ---------------------------------------------------------------- element access and conversion

TEST(TensorAccess, AtSetItemAndErrors) {
  Tensor x = zeros({2, 3}, DType::Int64);
  x.set({1, 2}, 5);
  EXPECT_EQ(x.at({1, 2}), 5);
  EXPECT_EQ(x.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 0, 0, 5}));
  EXPECT_EQ(x.size(-1), 3);
  EXPECT_EQ(x.size(0), 2);
  EXPECT_EMBER_ERROR(x.at({2, 0}), "at");
  EXPECT_EMBER_ERROR(x.at({0, -1}), "out of range");
  EXPECT_EMBER_ERROR(x.at({0}), "at");
  EXPECT_EMBER_ERROR(x.set({0, 3}, 1), "set");
  EXPECT_EMBER_ERROR(x.item(), "item");
  EXPECT_EMBER_ERROR(x.size(2), "size");
  EXPECT_EMBER_ERROR(x.data<float>(), "data");
  EXPECT_EQ(x.data<int64_t>()[5], 5);
  EXPECT_EMBER_ERROR(Tensor().shape(), "undefined");
  EXPECT_EQ(from_vector(std::vector<float>{2.5f}, {1, 1}).item(), 2.5);
}

TEST(TensorAccess, ToDtype) {
  Tensor x = from_vector(std::vector<double>{1.25, -2.75, 3.0, 1e10}, {2, 2});
  Tensor f = x.to(DType::Float32);
  EXPECT_EQ(f.dtype(), DType::Float32);
  EXPECT_EQ(f.to_vector<double>(), (std::vector<double>{1.25, -2.75, 3.0, double(float(1e10))}));
  Tensor i = x.to(DType::Int64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3, 10000000000}));  // truncation toward zero
  EXPECT_EQ(i.to(DType::Float64).to_vector<double>(), (std::vector<double>{1, -2, 3, 1e10}));
  EXPECT_EQ(x.to(DType::Float64).impl(), x.impl());  // same dtype: no copy
  // Conversion of a non-contiguous view reads through its strides.
  EXPECT_EQ(x.t().to(DType::Float32).to_vector<float>(), (std::vector<float>{1.25f, 3.f, -2.75f, 1e10f}));
  EXPECT_EQ(x.to(Device::CPU).impl(), x.impl());
}

TEST(TensorAccess, CopyAndFillIntoViews) {
  Tensor x = zeros({3, 4}, DType::Float64);
  x.slice(1, 0, 4, 2).fill_(1.0);  // even columns
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}));
  x.t().slice(0, 3, 4).fill_(7);  // the last column, through a transposed view
  EXPECT_EQ(x.at({2, 3}), 7);
  EXPECT_EQ(x.at({2, 2}), 1);
  // copy_ from a float32 source of another layout into a strided row.
  Tensor src = from_vector(std::vector<float>{5, 6}, {2});
  x.slice(0, 1, 2).slice(1, 1, 4, 2).copy_(src.view({1, 2}));
  EXPECT_EQ(x.at({1, 1}), 5);
  EXPECT_EQ(x.at({1, 3}), 6);
  // copy_ broadcasts the source.
  Tensor y = zeros({2, 3}, DType::Float64);
  y.copy_(from_vector(std::vector<double>{1, 2, 3}));
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  y.t().copy_(random({3, 2}, 11));
  EXPECT_EQ(y.t().to_vector<double>(), random({3, 2}, 11).to_vector<double>());
  y.zero_();
  for (double v : y.to_vector<double>()) EXPECT_EQ(v, 0);
  Tensor ints = zeros({4}, DType::Int64);
  ints.fill_(3.9);
  EXPECT_EQ(ints.to_vector<int64_t>(), (std::vector<int64_t>{3, 3, 3, 3}));
  EXPECT_EMBER_ERROR(y.copy_(zeros({4})), "copy_");
  EXPECT_EMBER_ERROR(y.copy_(zeros({3, 2, 3})), "copy_");  // the source may not have more dims
  EXPECT_EMBER_ERROR(y.copy_(Tensor()), "copy_");
}

// ---------------------------------------------------------------- printing

TEST(TensorPrint, ContainsValuesShapeAndDtype) {
  Tensor x = from_vector(std::vector<double>{1.5, -2, 3.25, 4}, {2, 2});
  std::string s = x.to_string();
  for (const char* piece : {"1.5", "-2", "3.25", "4", "shape=[2, 2]", "float64"})
    EXPECT_NE(s.find(piece), std::string::npos) << piece << " missing from " << s;
  std::ostringstream os;
  os << x;
  EXPECT_EQ(os.str(), s);
  // A transposed view prints its own element order.
  std::string t = x.t().to_string();
  EXPECT_LT(t.find("3.25"), t.find("-2")) << t;
  std::string i = arange(3).to_string();
  EXPECT_NE(i.find("[0, 1, 2]"), std::string::npos) << i;
  EXPECT_NE(i.find("int64"), std::string::npos) << i;
  EXPECT_NE(scalar(0.5).to_string().find("0.5"), std::string::npos);
  // Long dims are elided but keep their first and last entries.
  std::string l = arange(100).to_string(3);
  EXPECT_NE(l.find("..."), std::string::npos) << l;
  EXPECT_NE(l.find("99"), std::string::npos) << l;
  EXPECT_EQ(l.find("50"), std::string::npos) << l;
  Tensor g = ones({2});
  g.requires_grad_();
  EXPECT_NE(g.to_string().find("requires_grad"), std::string::npos);
}

// ---------------------------------------------------------------- allocator statistics

TEST(TensorMemory, CurrentAndPeakBytesMove) {
  MemoryStats before = memory_stats();
  reset_peak_memory();
  EXPECT_EQ(memory_stats().peak_bytes, before.current_bytes);
  int64_t bytes = 0;
  {
    Tensor a = empty({1000}, DType::Float64);  // 8000 bytes, a multiple of 64
    bytes = 8000;
    MemoryStats during = memory_stats();
    EXPECT_EQ(during.current_bytes, before.current_bytes + bytes);
    EXPECT_GE(during.peak_bytes, during.current_bytes);
    EXPECT_EQ(during.allocations, before.allocations + 1);
    Tensor view = a.view({10, 100});  // views allocate nothing
    EXPECT_EQ(memory_stats().current_bytes, during.current_bytes);
  }
  MemoryStats after = memory_stats();
  EXPECT_EQ(after.current_bytes, before.current_bytes);
  EXPECT_EQ(after.peak_bytes, before.current_bytes + bytes);
  EXPECT_GE(after.cached_bytes, bytes);  // the freed block is kept for reuse
  {
    Tensor b = empty({1000}, DType::Float64);  // reuses the cached block
    EXPECT_EQ(memory_stats().cached_bytes, after.cached_bytes - bytes);
  }
  // Sizes round up to 64 bytes.
  {
    MemoryStats s0 = memory_stats();
    Tensor c = empty({3}, DType::Float32);
    EXPECT_EQ(memory_stats().current_bytes - s0.current_bytes, 64);
  }
  reset_peak_memory();
  EXPECT_EQ(memory_stats().peak_bytes, memory_stats().current_bytes);
  allocator(Device::CPU).empty_cache();
  EXPECT_EQ(memory_stats().cached_bytes, 0);
}

TEST(TensorMemory, GrowingShapesDoNotGrowTheCacheWithoutBound) {
  // Generation without a KV cache: every step frees a block one size larger than the last, which
  // no later request reuses. The cache is held to the program's high-water mark (at least 256
  // MiB; this test process never holds 1 GiB at once) instead of keeping all 2 GiB.
  const MemoryStats s0 = memory_stats();
  int64_t freed = 0;
  for (int64_t step = 0; step < 64; ++step) {
    Tensor t = empty({(int64_t(8) << 20) + step * 64}, DType::Float32);  // 32 MiB and growing
    freed += t.numel() * 4;
  }
  const MemoryStats s1 = memory_stats();
  EXPECT_GT(freed, int64_t(2) << 30);
  EXPECT_LE(s1.cached_bytes, int64_t(1) << 30);
  EXPECT_EQ(s1.current_bytes, s0.current_bytes);
  // Same-size blocks are still reused: a steady loop allocates from the cache, not the system.
  Tensor a = empty({1 << 20}, DType::Float32);
  a = Tensor();
  const int64_t cached = memory_stats().cached_bytes;
  Tensor b = empty({1 << 20}, DType::Float32);
  EXPECT_EQ(memory_stats().cached_bytes, cached - (int64_t(4) << 20));
}

TEST(TensorMemory, LargeBlocksStartOnAHugePageAndCountTheirRequestedSize) {
  // A block of 2 MiB or more is placed on a 2 MiB boundary (for transparent huge pages) and rounded
  // up to whole huge pages underneath; the statistics still count the requested bytes, every byte
  // of it is usable, and a freed block is reused for the same size.
  const int64_t n = (int64_t(3) << 20) / 4 + 25;  // 3 MiB + 100 bytes of float32
  const int64_t bytes = (n * 4 + 63) / 64 * 64;
  const MemoryStats s0 = memory_stats();
  const void* first = nullptr;
  {
    Tensor t = empty({n}, DType::Float32);
    first = t.data<float>();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % (uintptr_t(2) << 20), 0u);
    EXPECT_EQ(memory_stats().current_bytes - s0.current_bytes, bytes);
    float* p = t.data<float>();
    for (int64_t i = 0; i < n; ++i) p[i] = float(i % 1000);
    EXPECT_EQ(p[n - 1], float((n - 1) % 1000));
  }
  Tensor again = empty({n}, DType::Float32);
  EXPECT_EQ(static_cast<const void*>(again.data<float>()), first);
  // Blocks below 2 MiB keep the 64-byte alignment and no more is promised.
  Tensor small = empty({1000}, DType::Float32);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data<float>()) % 64, 0u);
}

TEST(TensorMemory, ParseDevice) {
  EXPECT_EQ(parse_device("cpu"), Device::CPU);
  EXPECT_EQ(parse_device("cuda"), Device::CUDA);
  EXPECT_EMBER_ERROR(parse_device("tpu"), "tpu");
}

#ifndef EMBER_HAS_CUDA
TEST(TensorMemory, CudaTensorIsAnErrorWithoutCuda) { EXPECT_EMBER_ERROR(zeros({2}, DType::Float32, Device::CUDA), "cuda"); }
#endif

TEST(TensorTraining, PlainSgdLoopWithInPlaceUpdates) {
  // The loop an optimizer runs: forward, backward, an in-place update under no_grad, zero_grad.
  Tensor target = random({4}, 40);
  Tensor w = zeros({4}, DType::Float64);
  w.requires_grad_();
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    Tensor loss = sum(square(w - target));
    if (step == 0) first = loss.detach().item();
    last = loss.detach().item();
    loss.backward();
    {
      autograd::NoGradGuard no_grad;
      w.copy_(w - 0.1 * w.grad());
    }
    w.zero_grad();
  }
  EXPECT_TRUE(w.requires_grad());  // still the same leaf
  EXPECT_LT(last, 1e-4 * first);
  EXPECT_TRUE(all_close(w.detach(), target, 1e-2));
  // A leaf that is itself the output.
  Tensor s = scalar(2.0, DType::Float64);
  s.requires_grad_();
  s.backward();
  EXPECT_EQ(s.grad().item(), 1.0);
}

TEST(TensorAccess, CopyFromAnOverlappingViewOfItself) {
  Tensor x = random({3, 3}, 41);
  Tensor expect = x.t().clone();
  x.copy_(x.t());  // reads and writes the same storage
  EXPECT_TRUE(all_close(x, expect, 0, 0));
  Tensor v = arange(6, DType::Float64);
  v.slice(0, 1, 6).copy_(v.slice(0, 0, 5));  // shift right by one, overlapping
  EXPECT_EQ(v.to_vector<double>(), (std::vector<double>{0, 0, 1, 2, 3, 4}));
}

// narrow promises exactly `length` elements: a window past the end or a negative length raises
// instead of returning a clamped or empty view.
TEST(Tensor, NarrowOutOfRangeOrNegativeLengthRaises) {
  Tensor x = randn({3, 4});
  EXPECT_EMBER_ERROR(x.narrow(0, 2, 5), "narrow: length 5 from start 2 does not fit dimension 0 of size 3");
  EXPECT_EMBER_ERROR(x.narrow(0, 1, -1), "narrow: length -1");
  EXPECT_EMBER_ERROR(x.narrow(1, 5, 0), "narrow: start 5 is out of range");
  EXPECT_EMBER_ERROR(x.narrow(1, -5, 1), "narrow: start -5 is out of range");
  EXPECT_EMBER_ERROR(x.narrow(2, 0, 1), "out of range");
  EXPECT_EMBER_ERROR(scalar(1.0).narrow(0, 0, 1), "0-d");
  // In range, negative starts count from the end, and an empty window at the end is fine.
  EXPECT_TRUE(all_close(x.narrow(1, -3, 2), x.slice(1, 1, 3), 0, 0));
  EXPECT_EQ(x.narrow(0, 3, 0).shape(), (Shape{0, 4}));
  EXPECT_EQ(x.narrow(0, 0, 3).shape(), (Shape{3, 4}));
}

// fill_ (and full, scalar) of an int64 tensor with a value int64 cannot hold raises instead of
// storing whatever an undefined conversion gives.
TEST(Tensor, Int64FillRefusesValuesOutsideItsRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double v : {nan, inf, -inf, 9223372036854775808.0, -1e19}) {
    SCOPED_TRACE(v);
    EXPECT_EMBER_ERROR(full({2}, v, DType::Int64), "is not an int64 value");
  }
  EXPECT_EQ(full({1}, -9223372036854775808.0, DType::Int64).to_vector<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(full({1}, 4611686018427387904.0, DType::Int64).to_vector<int64_t>()[0], int64_t(1) << 62);
  EXPECT_TRUE(std::isnan(full({1}, nan).item()));  // floats take anything
}

// to_vector<int64_t> of an int64 tensor is exact: through a double, 2^53 + 1 rounded and 2^63 - 1
// overflowed to INT64_MIN.
TEST(Tensor, Int64ToVectorIsExact) {
  const std::vector<int64_t> v{std::numeric_limits<int64_t>::max(), (int64_t(1) << 53) + 1, std::numeric_limits<int64_t>::min(), -7};
  EXPECT_EQ(from_vector(v).to_vector<int64_t>(), v);
  EXPECT_EQ(from_vector(v, {2, 2}).t().to_vector<int64_t>(), (std::vector<int64_t>{v[0], v[2], v[1], v[3]}));
}

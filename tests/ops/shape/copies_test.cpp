// copy_strided on large strided tensors: rows adjacent on both sides (the memcpy rows), rows with a
// stride, enough rows for several threads, at one thread and two; each element against the source
// read by index.
#include "framework/core/parallel.h"
#include "framework/core/random.h"
#include "ops/reference.h"
#include "ops/shape/shape_ops.h"

using namespace ember;
using namespace ember::testing;

namespace {

void expect_same_elements(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();  // both in index order
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != y[i]) FAIL() << "element " << i << ": " << x[i] << " vs " << y[i];
}

}  // namespace

TEST(CopyStrided, LargeStridedCopiesAtOneAndTwoThreads) {
  const int before = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    SCOPED_TRACE(std::to_string(threads) + " threads");
    // Attention's head split: (B, T, H, d) -> (B, H, T, d), rows of d adjacent on both sides.
    Tensor x = random({12, 65, 4, 33}, 5).to(DType::Float32);
    Tensor heads = x.transpose(1, 2);
    Tensor out = empty(heads.shape(), heads.dtype());
    copy_strided(out, heads);
    expect_same_elements(out, heads);
    // Into a strided destination (a slice of every other column), from a transposed source.
    Tensor wide = zeros({301, 2 * 257}, DType::Float64);
    Tensor dst = slice(wide, 1, 0, 2 * 257, 2);
    Tensor src = random({257, 301}, 6).transpose(0, 1);
    copy_strided(dst, src);
    expect_same_elements(dst, src);
    EXPECT_EQ(slice(wide, 1, 1, 2 * 257, 2).abs().sum().item(), 0.0);  // the other columns untouched
    // Int64 and a 0-d tensor.
    Tensor i = randint({70, 513}, -1000, 1000).transpose(0, 1), io = empty(i.shape(), DType::Int64);
    copy_strided(io, i);
    expect_same_elements(io, i);
    Tensor s = from_vector(std::vector<double>{2.5}).reshape({}), so = empty({}, DType::Float64);
    copy_strided(so, s);
    EXPECT_EQ(so.item(), 2.5);
  }
  set_num_threads(before);
  EXPECT_THROW(copy_strided(empty({3}, DType::Float32), empty({4}, DType::Float32)), Error);
}

// A million recorded ops form a chain of a million Nodes; releasing it (or the VJP function that
// holds it) must not recurse once per node, on the main thread or on a thread with a 1 MiB stack.
#include <pthread.h>

#include "test_util.h"

using namespace ember;

namespace {

constexpr int kChain = 1000000;

// Records a chain of kChain adds under make_vjp, runs the backward pass, and drops everything.
void build_and_release_chain(double* grad_out) {
  Tensor x = scalar(1.0, DType::Float64);
  auto [ys, vjp] = make_vjp(
      [](const std::vector<Tensor>& in) {
        Tensor y = in[0];
        for (int i = 0; i < kChain; ++i) y = y + 1.0;
        return std::vector<Tensor>{y};
      },
      {x});
  *grad_out = vjp({scalar(1.0, DType::Float64)})[0].item();
}  // ys and vjp die here: the whole chain is released

void* on_small_stack(void* arg) {
  build_and_release_chain(static_cast<double*>(arg));
  return nullptr;
}

}  // namespace

TEST(DeepGraph, MillionOpChainIsReleasedOnTheMainThread) {
  double g = 0;
  build_and_release_chain(&g);
  EXPECT_EQ(g, 1.0);
}

TEST(DeepGraph, MillionOpChainIsReleasedOnAOneMebibyteStack) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 1 << 20), 0);
  pthread_t t;
  double g = 0;
  ASSERT_EQ(pthread_create(&t, &attr, on_small_stack, &g), 0);
  ASSERT_EQ(pthread_join(t, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(g, 1.0);
}

TEST(DeepGraph, EagerChainIsReleasedAfterBackward) {
  Tensor x = scalar(2.0, DType::Float64).requires_grad_();
  {
    Tensor y = x;
    for (int i = 0; i < kChain; ++i) y = y * 1.0;
    y.backward();
  }
  EXPECT_EQ(x.grad().item(), 1.0);
}

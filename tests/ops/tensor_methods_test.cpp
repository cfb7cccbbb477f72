// The op methods of Tensor give exactly what the free functions give, values and gradients.
#include "test_util.h"

namespace ember::testing {
namespace {

using Unary = std::function<Tensor(const Tensor&)>;

struct MethodCase {
  const char* name;
  Unary method, free_fn;
  bool positive = false;  // log, sqrt, pow need inputs away from zero
};

TEST(TensorMethods, MatchTheFreeFunctions) {
  std::vector<MethodCase> cases = {
      {"sum()", [](const Tensor& x) { return x.sum(); }, [](const Tensor& x) { return sum(x); }},
      {"sum(1)", [](const Tensor& x) { return x.sum(1); }, [](const Tensor& x) { return sum(x, {1}); }},
      {"sum(-1, keep)", [](const Tensor& x) { return x.sum(-1, true); }, [](const Tensor& x) { return sum(x, {-1}, true); }},
      {"sum({0, 2})", [](const Tensor& x) { return x.sum({0, 2}); }, [](const Tensor& x) { return sum(x, {0, 2}); }},
      {"mean()", [](const Tensor& x) { return x.mean(); }, [](const Tensor& x) { return mean(x); }},
      {"mean(0, keep)", [](const Tensor& x) { return x.mean(0, true); }, [](const Tensor& x) { return mean(x, {0}, true); }},
      {"mean({1, 2})", [](const Tensor& x) { return x.mean({1, 2}); }, [](const Tensor& x) { return mean(x, {1, 2}); }},
      {"max()", [](const Tensor& x) { return x.max(); }, [](const Tensor& x) { return max(x); }},
      {"max(2)", [](const Tensor& x) { return x.max(2); }, [](const Tensor& x) { return max(x, 2); }},
      {"min()", [](const Tensor& x) { return x.min(); }, [](const Tensor& x) { return min(x); }},
      {"min(1, keep)", [](const Tensor& x) { return x.min(1, true); }, [](const Tensor& x) { return min(x, 1, true); }},
      {"exp", [](const Tensor& x) { return x.exp(); }, [](const Tensor& x) { return exp(x); }},
      {"log", [](const Tensor& x) { return x.log(); }, [](const Tensor& x) { return log(x); }, true},
      {"sqrt", [](const Tensor& x) { return x.sqrt(); }, [](const Tensor& x) { return sqrt(x); }, true},
      {"abs", [](const Tensor& x) { return x.abs(); }, [](const Tensor& x) { return abs(x); }},
      {"neg", [](const Tensor& x) { return x.neg(); }, [](const Tensor& x) { return neg(x); }},
      {"relu", [](const Tensor& x) { return x.relu(); }, [](const Tensor& x) { return relu(x); }},
      {"tanh", [](const Tensor& x) { return x.tanh(); }, [](const Tensor& x) { return tanh(x); }},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }, [](const Tensor& x) { return sigmoid(x); }},
      {"square", [](const Tensor& x) { return x.square(); }, [](const Tensor& x) { return square(x); }},
      {"pow(1.7)", [](const Tensor& x) { return x.pow(1.7); }, [](const Tensor& x) { return pow(x, 1.7); }, true},
      {"pow(x)", [](const Tensor& x) { return x.pow(x); }, [](const Tensor& x) { return pow(x, x); }, true},
      {"clamp", [](const Tensor& x) { return x.clamp(-0.3, 0.6); }, [](const Tensor& x) { return clamp(x, -0.3, 0.6); }},
      {"softmax(1)", [](const Tensor& x) { return x.softmax(1); }, [](const Tensor& x) { return softmax(x, 1); }},
      {"softmax()", [](const Tensor& x) { return x.softmax(); }, [](const Tensor& x) { return softmax(x, -1); }},
      {"log_softmax(0)", [](const Tensor& x) { return x.log_softmax(0); }, [](const Tensor& x) { return log_softmax(x, 0); }},
      {"matmul", [](const Tensor& x) { return x.matmul(x.t()); }, [](const Tensor& x) { return matmul(x, x.t()); }},
      {"t", [](const Tensor& x) { return x.t(); }, [](const Tensor& x) { return transpose(x, -2, -1); }},
  };
  uint64_t seed = 1;
  for (const MethodCase& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = random({3, 4, 5}, seed++, c.positive);
    Tensor a = c.method(x), b = c.free_fn(x);
    EXPECT_EQ(a.dtype(), b.dtype());
    EXPECT_TRUE(all_close(a, b, 0, 0));
    // Same gradient too: the method records the same op on the trace.
    Tensor xa = x.clone().requires_grad_(), xb = x.clone().requires_grad_();
    Tensor w = random(b.shape(), seed++);
    sum(c.method(xa) * w).backward();
    sum(c.free_fn(xb) * w).backward();
    EXPECT_TRUE(all_close(xa.grad(), xb.grad(), 0, 0));
  }
}

TEST(TensorMethods, ArgReductionsAndComparisonsMatchTheFreeFunctions) {
  Tensor x = random({4, 6}, 40), y = random({4, 6}, 41);
  EXPECT_TRUE(all_close(x.argmax(1), argmax(x, 1), 0, 0));
  EXPECT_TRUE(all_close(x.argmax(0, true), argmax(x, 0, true), 0, 0));
  EXPECT_TRUE(all_close(x.argmin(1), argmin(x, 1), 0, 0));
  EXPECT_EQ(x.argmax(1).dtype(), DType::Int64);
  for (double v : {-0.4, 0.0, 0.7}) {
    SCOPED_TRACE(v);
    Tensor s = scalar_like(x, v);
    EXPECT_TRUE(all_close(x.gt(v), gt(x, s), 0, 0));
    EXPECT_TRUE(all_close(x.ge(v), ge(x, s), 0, 0));
    EXPECT_TRUE(all_close(x.lt(v), lt(x, s), 0, 0));
    EXPECT_TRUE(all_close(x.le(v), le(x, s), 0, 0));
  }
  Tensor xi = randint({5, 3}, -2, 3);  // small integers: eq finds ties
  EXPECT_TRUE(all_close(xi.eq(1.0), eq(xi, scalar_like(xi, 1.0)), 0, 0));
  EXPECT_GT(sum(xi.eq(1.0).to(DType::Int64)).item(), 0);
  EXPECT_TRUE(all_close(x.gt(y), gt(x, y), 0, 0));
  EXPECT_TRUE(all_close(x.ge(y), ge(x, y), 0, 0));
  EXPECT_TRUE(all_close(x.lt(y), lt(x, y), 0, 0));
  EXPECT_TRUE(all_close(x.le(y), le(x, y), 0, 0));
  EXPECT_TRUE(all_close(x.eq(x), eq(x, x), 0, 0));
  EXPECT_TRUE(all_close(xi.ne(1.0), ne(xi, scalar_like(xi, 1.0)), 0, 0));
  EXPECT_TRUE(all_close(x.ne(y), ne(x, y), 0, 0));
  EXPECT_TRUE(all_close(xi.eq(1.0).logical_not(), xi.ne(1.0), 0, 0));
  EXPECT_EQ(x.ne(y).dtype(), DType::Bool);
}

TEST(TensorMethods, FillWritesBoolTensors) {
  Tensor m = randint({3, 4}, 0, 2).to(DType::Bool);
  m.fill_(1.0);
  EXPECT_EQ(sum(m).item(), 12);  // sum of Bool counts the true elements
  m.slice(1, 0, 2).fill_(0.0);   // through a strided view
  EXPECT_EQ(sum(m).item(), 6);
}

TEST(TensorMethods, ErrorsNameTheOp) {
  Tensor x = random({2, 3}, 50);
  EXPECT_EMBER_ERROR(x.matmul(random({2, 3}, 51)), "matmul");
  EXPECT_EMBER_ERROR(x.sum(5), "sum");
  EXPECT_EMBER_ERROR(x.softmax(3), "softmax");
}

}  // namespace
}  // namespace ember::testing

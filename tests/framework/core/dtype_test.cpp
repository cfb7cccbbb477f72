// DType: sizes and names, and the Bool dtype's element access, factories, printing, views and the
// dispatch macros' refusal of Bool in numeric kernels.
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

TEST(DType, SizesNamesAndKinds) {
  EXPECT_EQ(itemsize(DType::Float32), 4u);
  EXPECT_EQ(itemsize(DType::Float64), 8u);
  EXPECT_EQ(itemsize(DType::Int64), 8u);
  EXPECT_EQ(itemsize(DType::Bool), 1u);
  EXPECT_STREQ(name(DType::Bool), "bool");
  EXPECT_FALSE(is_floating(DType::Bool));
  EXPECT_FALSE(is_floating(DType::Int64));
  EXPECT_TRUE(is_floating(DType::Float32));
  EXPECT_EQ(dtype_of<bool>::value, DType::Bool);
}

TEST(DType, BoolElementAccessAndFactories) {
  Tensor m = from_vector(std::vector<bool>{true, false, false, true, true, false}, {2, 3});
  EXPECT_EQ(m.dtype(), DType::Bool);
  EXPECT_EQ(m.shape(), (Shape{2, 3}));
  EXPECT_EQ(m.at({0, 0}), 1.0);
  EXPECT_EQ(m.at({0, 1}), 0.0);
  EXPECT_EQ(m.to_vector<bool>(), (std::vector<bool>{true, false, false, true, true, false}));
  EXPECT_EQ(m.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1, 1, 0}));
  m.set({0, 1}, 0.25);  // nonzero is true
  m.set({0, 0}, 0.0);
  EXPECT_EQ(m.data<bool>()[1], true);
  EXPECT_EQ(m.data<bool>()[0], false);
  EXPECT_EQ(m.slice(0, 0, 1).slice(1, 1, 2).item(), 1.0);
  EXPECT_EMBER_ERROR(m.data<float>(), "tensor is bool");
  EXPECT_EMBER_ERROR(from_vector(std::vector<bool>{true, false}, {3}), "from_vector: 2 values do not fill shape");

  EXPECT_EQ(zeros({3}, DType::Bool).to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(ones({2}, DType::Bool).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(full({2}, -3.0, DType::Bool).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(scalar(0.0, DType::Bool).item(), 0.0);
  EXPECT_EQ(zeros_like(m).dtype(), DType::Bool);
  EXPECT_EQ(static_cast<const uint8_t*>(full({1}, 5.0, DType::Bool).raw_data())[0], 1);  // a valid C++ bool
}

TEST(DType, BoolViewsCopiesAndPrinting) {
  Tensor m = gt(random({3, 4}, 1), zeros({}, DType::Float64));
  Tensor t = m.t();
  EXPECT_EQ(t.dtype(), DType::Bool);
  Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  for_each_index({4, 3}, [&](const Shape& i) { EXPECT_EQ(c.at(i), m.at({i[1], i[0]})); });
  EXPECT_EQ(m.reshape({12}).to_vector<bool>(), m.to_vector<bool>());
  EXPECT_EQ(m.clone().to_vector<bool>(), m.to_vector<bool>());
  EXPECT_EQ(m.unsqueeze(0).expand({2, 3, 4}).contiguous().slice(0, 1, 2).reshape({3, 4}).to_vector<bool>(),
            m.to_vector<bool>());
  Tensor p = from_vector(std::vector<bool>{true, false});
  EXPECT_EQ(p.to_string(), "tensor([true, false], shape=[2], dtype=bool)");
  EXPECT_EQ(nonzero(p).to_vector<int64_t>(), (std::vector<int64_t>{0}));
}

TEST(DType, NumericKernelsRefuseBoolNamingTheOp) {
  Tensor m = from_vector(std::vector<bool>{true, false});
  EXPECT_EMBER_ERROR(arange(0, 3, 1, DType::Bool), "arange: got bool, accepts float32, float64, int64, bfloat16, float16");
  EXPECT_EMBER_ERROR(rand({2}, DType::Bool), "uniform: dtype must be floating, got bool");
  EXPECT_EMBER_ERROR(cumsum(m, 0), "cumsum");
}

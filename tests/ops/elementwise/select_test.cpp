// Comparisons, where, masked_fill and casts: values against plain loops, broadcasting, gradients
// (where/masked_fill/cast are differentiable, comparisons are constants), and bad input.
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

TEST(Compare, ValuesDtypesAndBroadcasting) {
  struct C {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> op;
    std::function<bool(double, double)> ref;
  };
  std::vector<C> cs = {
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }, [](double x, double y) { return x > y; }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); }, [](double x, double y) { return x >= y; }},
      {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); }, [](double x, double y) { return x < y; }},
      {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); }, [](double x, double y) { return x <= y; }},
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }, [](double x, double y) { return x == y; }},
      {"ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); }, [](double x, double y) { return x != y; }},
  };
  // Small integers make ties common, so ge/le/eq are exercised on equal values.
  Generator g(1);
  Tensor a = randint({3, 1, 4}, -2, 3, &g), b = randint({2, 4}, -2, 3, &g);
  for (const C& c : cs)
    for (DType dt : {DType::Int64, DType::Float32, DType::Float64}) {
      Tensor x = a.to(dt), y = b.to(dt);
      Tensor r = c.op(x, y);
      EXPECT_EQ(r.dtype(), DType::Bool) << c.name;
      EXPECT_TRUE(all_close(r.to(DType::Float64), ref_binary(a.to(DType::Float64), b.to(DType::Float64), [&](double p, double q) {
        return c.ref(p, q) ? 1.0 : 0.0;
      }))) << c.name << " " << dt;
      Tensor xt = transposed_random({3, 4}, 2), yt = strided_random({3, 4}, 3);
      EXPECT_TRUE(all_close(c.op(xt, yt), ref_binary(xt, yt, [&](double p, double q) { return c.ref(p, q) ? 1.0 : 0.0; })));
      EXPECT_EMBER_ERROR(c.op(x, random({5}, 1)), std::string(c.name) + ":");
      EXPECT_EMBER_ERROR(c.op(a, random({2, 4}, 1)), std::string(c.name) + ": dtype mismatch");
    }
  // Bool operands: both Bool compare as false < true; one Bool beside numbers compares as 0 / 1.
  Tensor p = gt(a, zeros({}, DType::Int64)), q = ge(b, zeros({}, DType::Int64));
  for (const C& c : cs) {
    Tensor r = c.op(p, q);
    EXPECT_EQ(r.dtype(), DType::Bool) << c.name;
    EXPECT_TRUE(all_close(r, ref_binary(p.to(DType::Float64), q.to(DType::Float64), [&](double u, double v) {
      return c.ref(u, v) ? 1.0 : 0.0;
    }))) << c.name << " bool";
    Tensor y = b.to(DType::Float64);
    EXPECT_TRUE(all_close(c.op(p, y), ref_binary(p.to(DType::Float64), y, [&](double u, double v) {
      return c.ref(u, v) ? 1.0 : 0.0;
    }))) << c.name << " bool vs float64";
  }
}

TEST(Compare, IsAConstantUnderAutodiff) {
  Tensor x = random({4}, 4);
  auto [y, vjp] = make_vjp([](const Tensor& v) { return gt(v, scalar_like(v, 0.0)) * v; }, x);
  EXPECT_TRUE(all_close(vjp(ones({4}, DType::Float64)), gt(x, scalar_like(x, 0.0))));
  EXPECT_EQ(vjp(ones({4}, DType::Float64)).dtype(), DType::Float64);  // the Bool factor took v's dtype
  EXPECT_FALSE(gt(x, x).is_traced());
}

TEST(Where, ValuesWithBroadcastingAndAnyConditionDtype) {
  Tensor a = random({3, 1, 4}, 5), b = random({2, 4}, 6);
  Generator g(7);
  Tensor cond = randint({3, 2, 1}, 0, 2, &g);  // int64 condition, broadcast too
  Tensor y = where(cond, a, b);
  EXPECT_EQ(y.shape(), (Shape{3, 2, 4}));
  Tensor ref = ref_tensor({3, 2, 4}, [&](const Shape& i) {
    return cond.at({i[0], i[1], 0}) != 0 ? a.at({i[0], 0, i[2]}) : b.at({i[1], i[2]});
  });
  EXPECT_TRUE(all_close(y, ref, 0, 0));
  // Float conditions, non-contiguous operands, float32 data.
  Tensor fc = random({4, 3}, 8).t();  // nonzero almost surely: true everywhere except where set
  fc.set({1, 2}, 0.0);
  Tensor xa = transposed_random({3, 4}, 9).to(DType::Float32), xb = strided_random({3, 4}, 10).to(DType::Float32);
  Tensor w = where(fc, xa, xb);
  EXPECT_EQ(w.dtype(), DType::Float32);
  for_each_index({3, 4}, [&](const Shape& i) { EXPECT_EQ(w.at(i), fc.at(i) != 0 ? xa.at(i) : xb.at(i)); });
  // A condition that is only nonzero as a fraction must still count as true for int64 data.
  Tensor half = full({2}, 0.5, DType::Float64);
  EXPECT_EQ(where(half, arange(2), full({2}, -1, DType::Int64)).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  Tensor tiny = from_vector(std::vector<double>{1e-50, 0.0});  // underflows to 0 in float32
  EXPECT_EQ(where(tiny, ones({2}), zeros({2})).to_vector<float>(), (std::vector<float>{1, 0}));
}

TEST(Where, TakesABoolMask) {
  Tensor a = random({3, 1, 4}, 40), b = random({2, 4}, 41);
  Tensor mask = gt(random({3, 2, 1}, 42), zeros({}, DType::Float64));
  ASSERT_EQ(mask.dtype(), DType::Bool);
  Tensor y = where(mask, a, b);
  Tensor ref = ref_tensor({3, 2, 4}, [&](const Shape& i) {
    return mask.at({i[0], i[1], 0}) != 0 ? a.at({i[0], 0, i[2]}) : b.at({i[1], i[2]});
  });
  EXPECT_TRUE(all_close(y, ref, 0, 0));
  // A transposed mask, Bool data (stays Bool) and Bool beside float data (takes the float dtype).
  Tensor mt = gt(random({4, 3}, 43), zeros({}, DType::Float64)).t();
  Tensor p = lt(random({3, 4}, 44), zeros({}, DType::Float64)), q = ge(random({3, 4}, 45), zeros({}, DType::Float64));
  Tensor wb = where(mt, p, q);
  EXPECT_EQ(wb.dtype(), DType::Bool);
  for_each_index({3, 4}, [&](const Shape& i) { EXPECT_EQ(wb.at(i), mt.at(i) != 0 ? p.at(i) : q.at(i)); });
  Tensor wf = where(mt, p, b.slice(0, 0, 1).expand({3, 4}));
  EXPECT_EQ(wf.dtype(), DType::Float64);
  for_each_index({3, 4}, [&](const Shape& i) { EXPECT_EQ(wf.at(i), mt.at(i) != 0 ? p.at(i) : b.at({0, i[1]})); });
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return where(mask, in[0], in[1]); }, {a, b}));
  Tensor m = masked_fill(a.expand({3, 2, 4}), mask, -5.0);
  for_each_index({3, 2, 4}, [&](const Shape& i) { EXPECT_EQ(m.at(i), mask.at({i[0], i[1], 0}) ? -5.0 : a.at({i[0], 0, i[2]})); });
}

TEST(Where, Gradcheck) {
  Generator g(11);
  Tensor cond = randint({3, 1, 4}, 0, 2, &g);
  struct P {
    const char* what;
    Tensor a, b;
  };
  std::vector<P> ps = {
      {"same", random({3, 2, 4}, 12), random({3, 2, 4}, 13)},
      {"broadcast [2,4] and 0-d", random({2, 4}, 14), random({}, 15)},
      {"views", transposed_random({2, 4}, 16), strided_random({3, 1, 4}, 17)},
  };
  for (const P& p : ps) {
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return where(cond, in[0], in[1]); }, {p.a, p.b})) << p.what;
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return where(cond, in[0] * in[0], in[1]); }, {p.a, p.b}))
        << p.what;
  }
  // Only one branch traced.
  Tensor b = random({3, 2, 4}, 18);
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return where(cond, in[0], b); }, {random({4}, 19)}));
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return where(cond, b, in[0]); }, {random({4}, 19)}));
}

TEST(MaskedFill, ValuesAndGradient) {
  Tensor x = random({3, 4}, 20);
  Generator g(21);
  Tensor mask = randint({1, 4}, 0, 2, &g);
  Tensor y = masked_fill(x, mask, -1e9);
  for_each_index({3, 4}, [&](const Shape& i) { EXPECT_EQ(y.at(i), mask.at({0, i[1]}) ? -1e9 : x.at(i)); });
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, 2.0); }, {x}));
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, 2.0); }, {transposed_random({3, 4}, 22)}));
  // The gradient is zero exactly where the mask is set.
  Tensor gx = grad([&](const Tensor& v) { return sum(masked_fill(v, mask, 0.0)); })(x);
  for_each_index({3, 4}, [&](const Shape& i) { EXPECT_EQ(gx.at(i), mask.at({0, i[1]}) ? 0.0 : 1.0); });
}

TEST(Where, Errors) {
  Tensor a = random({2, 3}, 23), b = random({2, 3}, 24);
  EXPECT_EMBER_ERROR(where(ones({4}), a, b), "where:");
  EXPECT_EMBER_ERROR(where(ones({2, 3}), a, b.to(DType::Float32)), "where: dtype mismatch");
  EXPECT_EMBER_ERROR(where(ones({2, 3}), a, random({4}, 1)), "where:");
  EXPECT_EMBER_ERROR(where(Tensor(), a, b), "where:");
  EXPECT_EMBER_ERROR(masked_fill(a, ones({4}), 0.0), "masked_fill");
  EXPECT_EMBER_ERROR(masked_fill(a, ones({3, 2, 3}), 0.0), "masked_fill");  // the mask may not grow x
}

TEST(Cast, BetweenFloatTypesAndInt64) {
  Tensor x = from_vector(std::vector<double>{1.0 / 3, -2.5, 1e20, 7.9}, {2, 2});
  Tensor f = cast(x, DType::Float32);
  for_each_index({2, 2}, [&](const Shape& i) { EXPECT_EQ(f.at(i), double(float(x.at(i)))); });
  EXPECT_EQ(cast(f, DType::Float64).to_vector<double>(), f.to_vector<double>());
  Tensor small = from_vector(std::vector<double>{1.5, -2.5, 3.99, -0.5});
  EXPECT_EQ(cast(small, DType::Int64).to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3, 0}));
  EXPECT_EQ(cast(cast(small, DType::Float32), DType::Int64).to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3, 0}));
  EXPECT_EQ(cast(arange(3), DType::Float32).to_vector<float>(), (std::vector<float>{0, 1, 2}));
  // Non-contiguous input.
  Tensor t = transposed_random({3, 5}, 25);
  Tensor tf = cast(t, DType::Float32);
  for_each_index({3, 5}, [&](const Shape& i) { EXPECT_EQ(tf.at(i), double(float(t.at(i)))); });
  EXPECT_EQ(cast(x, DType::Float64).impl(), x.impl());
}

TEST(Cast, ToAndFromBool) {
  Tensor x = from_vector(std::vector<double>{0.0, -2.5, 1e-50, 0.5, -0.0, std::nan("")});
  // Nonzero is true (NaN too, as in PyTorch); a float32 1e-50 would already be 0, float64 is not.
  EXPECT_EQ(cast(x, DType::Bool).to_vector<bool>(), (std::vector<bool>{false, true, true, true, false, true}));
  EXPECT_EQ(x.to(DType::Bool).dtype(), DType::Bool);
  EXPECT_EQ(cast(from_vector(std::vector<int64_t>{0, 3, -1}), DType::Bool).to_vector<bool>(),
            (std::vector<bool>{false, true, true}));
  Tensor m = from_vector(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(cast(m, DType::Float32).to_vector<float>(), (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(cast(m, DType::Float64).to_vector<double>(), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(cast(m, DType::Int64).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(cast(m, DType::Bool).impl(), m.impl());
  // Non-contiguous Bool input.
  Tensor mt = gt(transposed_random({3, 5}, 28), zeros({}, DType::Float64));
  Tensor mf = cast(mt, DType::Float32);
  for_each_index({3, 5}, [&](const Shape& i) { EXPECT_EQ(mf.at(i), mt.at(i)); });
  // No gradient through a Bool cast.
  EXPECT_TRUE(all_close(grad([](const Tensor& v) { return sum(cast(cast(v, DType::Bool), DType::Float64) * v); })(
                            from_vector(std::vector<double>{0.0, 2.5})),
                        from_vector(std::vector<double>{0, 1})));
}

TEST(Cast, IsDifferentiableBetweenFloatTypes) {
  // float64 -> float32 -> float64 round trip: gradcheck in float64 with float32 rounding noise.
  GradcheckOptions opt;
  opt.eps = 1e-3;
  opt.atol = 1e-3;
  opt.rtol = 1e-2;
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return cast(cast(in[0], DType::Float32) * 2.0, DType::Float64); },
                      {random({2, 3}, 26)}, opt));
  // The cotangent comes back in the input's dtype.
  Tensor x = random({3}, 27).to(DType::Float32);
  auto [y, vjp] = make_vjp([](const Tensor& v) { return cast(v, DType::Float64) * 3.0; }, x);
  Tensor gx = vjp(ones({3}, DType::Float64));
  EXPECT_EQ(gx.dtype(), DType::Float32);
  EXPECT_TRUE(all_close(gx.to(DType::Float64), full({3}, 3.0, DType::Float64)));
  auto [y2, t2] = make_jvp([](const Tensor& v) { return cast(v, DType::Float64); }, x, ones({3}));
  EXPECT_EQ(t2.dtype(), DType::Float64);
  // An integer cast is a constant: no gradient flows through it.
  EXPECT_TRUE(all_close(grad([](const Tensor& v) { return sum(cast(cast(v, DType::Int64), DType::Float64) * v); })(
                            from_vector(std::vector<double>{1.5, 2.5})),
                        from_vector(std::vector<double>{1, 2})));
}

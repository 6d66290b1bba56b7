// LibTorch's tensor API beside the op table's: add and sub with alpha, the in-place
// arithmetic methods and their autograd rules, max and min along a dim with indices, the
// current lazy device, and the generator's state. References are plain loops.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <lazytensor/lazytensor.hpp>

#include "trace_helpers.hpp"

namespace lt {
namespace {

const Device devices[] = {cpu, lazy(0)};

Tensor f32_of(const std::vector<float>& v, Shape s, Device d) { return from_vector(v, s, d); }

using testing_helpers::expect_error;

TEST(TensorApi, AddAndSubWithAlphaBroadcast) {
  // Halves and small integers: every product and sum is exact in f32, so the result does not
  // depend on whether alpha * b is fused into the addition.
  const std::vector<float> a = {1, -2, 0.5f, 3, 4.5f, -6}, b = {0.5f, -1, 2};
  for (Device d : devices) {
    SCOPED_TRACE(d.str());
    Tensor ta = f32_of(a, {2, 3}, d), tb = f32_of(b, {3}, d);
    std::vector<float> add = ta.add(tb, 2.5).to_vector<float>(), sub = lt::sub(ta, tb, -3).to_vector<float>();
    std::vector<float> add_expr = (ta * 2).add(tb, 0.5).to_vector<float>();
    std::vector<float> add_scalar = ta.add(1.5, 2).to_vector<float>(), sub_scalar = ta.sub(2, 3).to_vector<float>();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const float bj = b[i % 3];
      EXPECT_EQ(add[i], a[i] + 2.5f * bj) << i;
      EXPECT_EQ(sub[i], a[i] - (-3.0f) * bj) << i;
      EXPECT_EQ(add_expr[i], a[i] * 2 + 0.5f * bj) << i;
      EXPECT_EQ(add_scalar[i], a[i] + 3.0f) << i;
      EXPECT_EQ(sub_scalar[i], a[i] - 6.0f) << i;
    }
    EXPECT_EQ(ta.add(tb, 2.5).dtype(), f32);
  }
}

TEST(TensorApi, AlphaKeepsTheResultDtype) {
  Tensor a = from_vector(std::vector<std::int64_t>{5, -7, 9}, {3}), b = from_vector(std::vector<std::int32_t>{2, 3, -4}, {3});
  Tensor r = lt::add(a, b, 3);
  EXPECT_EQ(r.dtype(), i64);
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{11, 2, -3}));
  // A floating result takes a floating alpha; an integral one refuses it, as PyTorch does.
  Tensor f = from_vector(std::vector<float>{1, 2, 3}, {3});
  EXPECT_EQ(lt::add(f, b, 0.5).to_vector<float>(), (std::vector<float>{2, 3.5f, 1}));
  expect_error([&] { (void)lt::add(a, b, 0.5); }, "alpha must not be a floating point number");
  expect_error([&] { (void)f.sub(f, true); }, "bool alpha");
  // alpha 1 is the table's op itself.
  EXPECT_EQ(f.add(f, 1).to_vector<float>(), Tensor(f + f).to_vector<float>());
}

TEST(TensorApi, MulAndDivMethods) {
  const std::vector<float> a = {1, -2, 0.5f, 3}, b = {4, 0.25f, -8, 2};
  for (Device d : devices) {
    Tensor ta = f32_of(a, {4}, d), tb = f32_of(b, {4}, d);
    std::vector<float> mul = ta.mul(tb).to_vector<float>(), div = ta.div(tb).to_vector<float>();
    std::vector<float> mul_s = ta.mul(3).to_vector<float>(), div_s = ta.div(4.0).to_vector<float>();
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(mul[i], a[i] * b[i]);
      EXPECT_EQ(div[i], a[i] / b[i]);
      EXPECT_EQ(mul_s[i], a[i] * 3);
      EXPECT_EQ(div_s[i], a[i] / 4);
    }
  }
}

TEST(TensorApi, InPlaceArithmeticRebindsEveryHandle) {
  const std::vector<float> a = {1, -2, 0.5f, 3, 4.5f, -6}, b = {0.5f, -1, 2};
  for (Device d : devices) {
    SCOPED_TRACE(d.str());
    Tensor t = f32_of(a, {2, 3}, d), other = f32_of(b, {3}, d);
    Tensor alias = t;  // another handle of the same tensor, as in PyTorch
    Tensor& same = t.add_(other, 2).sub_(1.5).mul_(other).div_(2.0);
    EXPECT_EQ(&same, &t);
    std::vector<float> got = alias.to_vector<float>();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const float bj = b[i % 3];
      EXPECT_EQ(got[i], (a[i] + 2 * bj - 1.5f) * bj / 2.0f) << i;
    }
    // add_ with a scalar operand and alpha; sub_ with alpha.
    Tensor u = f32_of(a, {2, 3}, d);
    u.add_(2, 0.5).sub_(u, 0.5);
    std::vector<float> uv = u.to_vector<float>();
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(uv[i], (a[i] + 1) - 0.5f * (a[i] + 1)) << i;
  }
}

TEST(TensorApi, InPlaceFollowsPyTorchShapeAndDtypeRules) {
  Tensor row = from_vector(std::vector<float>{1, 2, 3}, {3});
  Tensor grid = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error([&] { row.add_(grid); }, "add_: the result's shape [2, 3] is not the tensor's [3]");
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{1, 2, 3}));  // nothing changed
  Tensor ints = from_vector(std::vector<std::int64_t>{4, 5, 6}, {3});
  expect_error([&] { ints.add_(1.5); }, "add_: the result's dtype f32 cannot be cast to the tensor's i64");
  expect_error([&] { ints.div_(2); }, "div_");  // true division: a floating quotient
  expect_error([&] { ints.mul_(row); }, "mul_");
  EXPECT_EQ(ints.to_vector<std::int64_t>(), (std::vector<std::int64_t>{4, 5, 6}));
  // A wider result is cast back to the tensor's dtype, as PyTorch does: f32 += f64.
  Tensor wide = from_vector(std::vector<double>{0.1, 0.2, 0.3}, {3});
  row.add_(wide);
  EXPECT_EQ(row.dtype(), f32);
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{static_cast<float>(1 + 0.1), static_cast<float>(2 + 0.2),
                                                       static_cast<float>(3 + 0.3)}));
  ints.mul_(from_vector(std::vector<std::int32_t>{2, 3, 4}, {3}));
  EXPECT_EQ(ints.to_vector<std::int64_t>(), (std::vector<std::int64_t>{8, 15, 24}));
}

TEST(TensorApi, InPlaceOnALeafThatRequiresGradFailsOutsideNoGrad) {
  for (Device d : devices) {
    SCOPED_TRACE(d.str());
    Tensor w = from_vector(std::vector<double>{1, 2}, {2}, d).requires_grad_();
    expect_error([&] { w.add_(1); }, "add_: a leaf that requires grad cannot be updated in place");
    expect_error([&] { w.mul_(w); }, "mul_");
    {
      no_grad guard;
      w.sub_(0.5).mul_(2.0);
    }
    EXPECT_TRUE(w.requires_grad());
    EXPECT_TRUE(w.is_leaf());
    EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{1, 3}));
    // A result takes the update's history: d/dw of ((w * 3) + 1) * w is 6 w + 1.
    Tensor y = w * 3;
    y.add_(1).mul_(w);
    EXPECT_FALSE(y.is_leaf());
    y.sum().backward();
    EXPECT_EQ(w.grad().to_vector<double>(), (std::vector<double>{7, 19}));
    // A tensor without history that takes a value with history starts requiring grad.
    w.mutable_grad() = {};
    Tensor x = from_vector(std::vector<double>{5, -1}, {2}, d);
    x.mul_(w);
    EXPECT_TRUE(x.requires_grad());
    x.sum().backward();
    EXPECT_EQ(w.grad().to_vector<double>(), (std::vector<double>{5, -1}));
  }
}

/// Reference of max/min along dim 1 of a [rows, cols] row-major matrix, PyTorch CPU's rules:
/// NaN wins (its first occurrence), else the first extreme.
void extremes_reference(const std::vector<float>& x, int rows, int cols, bool largest, std::vector<float>& values,
                        std::vector<std::int64_t>& indices) {
  for (int r = 0; r < rows; ++r) {
    int at = 0;
    for (int c = 0; c < cols; ++c) {
      float v = x[static_cast<std::size_t>(r * cols + c)], best = x[static_cast<std::size_t>(r * cols + at)];
      if (std::isnan(best)) break;
      if (std::isnan(v) || (largest ? v > best : v < best)) at = c;
    }
    values.push_back(x[static_cast<std::size_t>(r * cols + at)]);
    indices.push_back(at);
  }
}

TEST(TensorApi, MaxAndMinAlongADimGiveValuesAndFirstIndices) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1, 3, 3, -1, 2, 2, 1, 2, nan, 5, nan, 0, -4, -4, 7, -4};
  for (Device d : devices) {
    for (bool largest : {true, false}) {
      SCOPED_TRACE(d.str() + (largest ? " max" : " min"));
      Tensor t = f32_of(x, {4, 4}, d);
      auto [values, indices] = largest ? t.max(1) : lt::min(t, 1);
      std::vector<float> ref_v;
      std::vector<std::int64_t> ref_i;
      extremes_reference(x, 4, 4, largest, ref_v, ref_i);
      EXPECT_EQ(values.shape(), Shape{4});
      EXPECT_EQ(indices.dtype(), i64);
      EXPECT_EQ(indices.to_vector<std::int64_t>(), ref_i);
      std::vector<float> got = values.to_vector<float>();
      for (std::size_t r = 0; r < 4; ++r)
        EXPECT_TRUE(got[r] == ref_v[r] || (std::isnan(got[r]) && std::isnan(ref_v[r]))) << r;
      // Along dim 0 with keepdim: the transposed problem.
      auto [kv, ki] = largest ? lt::max(t, -2, true) : t.min(0, true);
      EXPECT_EQ(kv.shape(), (Shape{1, 4}));
      EXPECT_EQ(ki.shape(), (Shape{1, 4}));
      std::vector<float> xt(16);
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) xt[static_cast<std::size_t>(c * 4 + r)] = x[static_cast<std::size_t>(r * 4 + c)];
      std::vector<float> tv;
      std::vector<std::int64_t> ti;
      extremes_reference(xt, 4, 4, largest, tv, ti);
      EXPECT_EQ(ki.to_vector<std::int64_t>(), ti);
    }
  }
}

TEST(TensorApi, MaxAndMinOfIntegersAndBools) {
  Tensor ints = from_vector(std::vector<std::int32_t>{3, 9, 9, -2, -7, -7}, {2, 3});
  auto [iv, ii] = ints.max(1);
  EXPECT_EQ(iv.dtype(), i32);
  EXPECT_EQ(iv.to_vector<std::int32_t>(), (std::vector<std::int32_t>{9, -2}));
  EXPECT_EQ(ii.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0}));
  auto [nv, ni] = ints.min(1);
  EXPECT_EQ(nv.to_vector<std::int32_t>(), (std::vector<std::int32_t>{3, -7}));
  EXPECT_EQ(ni.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1}));
  Tensor flags = from_vector(std::vector<std::int64_t>{0, 1, 1, 0, 0, 0}, {2, 3}) != 0;
  auto [bv, bi] = flags.max(1);
  EXPECT_EQ(bv.dtype(), boolean);
  EXPECT_EQ(bv.to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(bi.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0}));
  auto [fv, fi] = flags.min(1);
  EXPECT_EQ(fv.to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(fi.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 0}));
}

TEST(TensorApi, MaxAlongADimSendsTheGradientToTheChosenElement) {
  for (Device d : devices) {
    SCOPED_TRACE(d.str());
    Tensor x = from_vector(std::vector<double>{2, 5, 5, 1, -3, -3}, {2, 3}, d).requires_grad_();
    auto [values, indices] = x.max(1);
    EXPECT_TRUE(values.requires_grad());
    EXPECT_FALSE(indices.requires_grad());
    (values * from_vector(std::vector<double>{10, 100}, {2}, d)).sum().backward();
    // Ties: torch.max(dim) sends it to the first, where amax shares it.
    EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 10, 0, 100, 0, 0}));
    x.mutable_grad() = {};
    auto [mv, mi] = x.min(1, true);
    mv.sum().backward();
    EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  }
}

TEST(TensorApi, MaxAndMinWholeAndElementwise) {
  Tensor a = from_vector(std::vector<float>{1, -5, 4, 2}, {2, 2}), b = from_vector(std::vector<float>{3, -6, 0, 2}, {2, 2});
  EXPECT_EQ(a.max().item<float>(), 4);
  EXPECT_EQ(lt::min(a).item<float>(), -5);
  EXPECT_EQ(a.max().dim(), 0);
  EXPECT_EQ(lt::max(a, b).to_vector<float>(), (std::vector<float>{3, -5, 4, 2}));
  EXPECT_EQ(a.min(b).to_vector<float>(), (std::vector<float>{1, -6, 0, 2}));
  // A zero-dim tensor: its one element, index 0.
  auto [sv, si] = lt::max(full({}, 7.0f), 0);
  EXPECT_EQ(sv.item<float>(), 7);
  EXPECT_EQ(si.item<std::int64_t>(), 0);
  EXPECT_EQ(si.dtype(), i64);
}

TEST(TensorApi, MaxAndMinRefuseBadDims) {
  Tensor a = zeros({2, 3});
  expect_error([&] { (void)a.max(2); }, "max");
  expect_error([&] { (void)lt::min(a, -3); }, "min");
  expect_error([&] { (void)lt::max(zeros({2, 0}), 1); }, "max: dim 1 has extent 0");
  auto [v, i] = lt::max(zeros({0, 3}), 1);  // empty rows of a non-empty dim: nothing to choose
  EXPECT_EQ(v.shape(), Shape{0});
}

TEST(TensorApi, SetDeviceAndDeviceGuardChooseTheCurrentLazyDevice) {
  ASSERT_EQ(device(), lazy(0));
  {
    device_guard guard(lazy(2));
    EXPECT_EQ(device(), lazy(2));
    EXPECT_EQ(guard.previous(), lazy(0));
    Tensor t = Tensor(ones({3}, device()) + 1);
    EXPECT_EQ(t.device(), lazy(2));
    sync();  // the current device's step
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{2, 2, 2}));
    {
      device_guard inner(lazy(5));
      EXPECT_EQ(device(), lazy(5));
    }
    EXPECT_EQ(device(), lazy(2));
  }
  EXPECT_EQ(device(), lazy(0));
  set_device(lazy(3));
  EXPECT_EQ(device(), lazy(3));
  set_device(lazy(0));
  EXPECT_EQ(device(), lazy(0));
  expect_error([] { set_device(cpu); }, "set_device: cpu is not a lazy device");
  expect_error([] { set_device(lazy(max_lazy_devices)); }, "out of range");
  expect_error([] { device_guard bad(lazy(-1)); }, "out of range");
  EXPECT_EQ(device(), lazy(0));  // a refused guard changes nothing
}

TEST(TensorApi, GeneratorStateReplaysTheDraws) {
  manual_seed(1234);
  const RandomState start = default_generator().state();
  EXPECT_EQ(start, (RandomState{1234, 0}));
  std::vector<float> first = rand({5}).to_vector<float>();
  const RandomState after = default_generator().state();
  EXPECT_EQ(after.seed, 1234u);
  EXPECT_GT(after.offset, 0u);  // the draw claimed blocks
  std::vector<float> second = rand({5}).to_vector<float>();
  default_generator().set_state(start);
  EXPECT_EQ(rand({5}).to_vector<float>(), first);
  default_generator().set_state(after);
  EXPECT_EQ(rand({5}).to_vector<float>(), second);
}

}  // namespace
}  // namespace lt

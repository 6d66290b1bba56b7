// Static-shape tensors: results and shapes agree with the dynamic ops, conversions share the
// tensor, and a tensor of the wrong runtime shape is refused. (Misuses that must not compile
// are in tests/static_shapes.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

template <class X> std::vector<float> values(const X& x) { return Tensor(x).template to_vector<float>(); }

TEST(FixedTensor, OpsGiveTheDynamicResultsWithStaticShapes) {
  auto d = device();
  FixedTensor<4, 6> x{randn({4, 6}, d)};
  FixedTensor<5, 6> w{randn({5, 6}, d)};
  FixedTensor<5> b{randn({5}, d)};

  FixedTensor<4, 5> y = relu(linear(x, w, b)) * 0.5f;
  Tensor lin = linear(x.tensor(), w.tensor(), b.tensor());
  Tensor want = relu(lin) * 0.5f;
  EXPECT_EQ(values(y), values(want));
  static_assert(std::is_same_v<decltype(matmul(x, FixedTensor<6, 3>{}))::extents_type, extents<4, 3>>);
  static_assert(std::is_same_v<decltype(matmul(FixedTensor<6>{}, FixedTensor<2, 6, 3>{}))::extents_type, extents<2, 3>>);
  static_assert(std::is_same_v<decltype(x + FixedTensor<1, 6>{})::extents_type, extents<4, 6>>);
  static_assert(std::is_same_v<decltype(sum<0, true>(x))::extents_type, extents<1, 6>>);
  static_assert(std::is_same_v<decltype(reshape<2, -1>(x))::extents_type, extents<2, 12>>);

  EXPECT_EQ(values(sum<1>(y)), values(sum(Tensor(want), 1)));
  EXPECT_EQ(values(mean<-1, true>(x)), values(mean(x.tensor(), -1, true)));
  FixedTensor<2, 12> r = reshape<2, -1>(x);
  EXPECT_EQ(Tensor(r).shape(), (Shape{2, 12}));
  EXPECT_EQ(values(r), values(x));

  FixedTensor<2, 3, 9, 9> img{randn({2, 3, 9, 9}, d)};
  FixedTensor<4, 3, 3, 3> k{randn({4, 3, 3, 3}, d)};
  FixedTensor<4> kb{randn({4}, d)};
  FixedTensor<2, 4, 5, 5> c = conv2d<2, 1>(img, k, kb);
  EXPECT_EQ(values(c), values(conv2d(img.tensor(), k.tensor(), kb.tensor(), 2, 1)));
}

TEST(FixedTensor, ElementwiseOpsStayOneFusedExpression) {
  FixedTensor<3, 4> a{randn({3, 4}, device())}, b{randn({3, 4}, device())};
  FixedTensor<4> c{randn({4}, device())};
  FixedTensor<3, 4> y = relu(a * b + c) * 0.5f;
  std::string ir = debug::ir_text({y});
  EXPECT_NE(ir.find("fragment{mul(relu(add(mul("), std::string::npos) << ir;
}

TEST(FixedTensor, ConvertsToTensorWithoutACopy) {
  Tensor t = randn({2, 3}, device());
  FixedTensor<2, 3> f{t};
  const Tensor& view = f;
  EXPECT_EQ(view.impl_ptr(), t.impl_ptr());
  EXPECT_EQ((FixedTensor<2, 3>::shape()), (Shape{2, 3}));
}

TEST(FixedTensor, ATensorOfAnotherShapeIsRefused) {
  try {
    FixedTensor<2, 3> f{randn({3, 2}, device())};
    ADD_FAILURE() << "no lt::Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("FixedTensor[2, 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("f32[3, 2]"), std::string::npos) << m;
  }
  EXPECT_THROW(FixedTensor<2>{Tensor()}, Error);
}

}  // namespace
}  // namespace lt

// PyTorch's type promotion, checked through the ops against tables written out by hand:
// tensors with dimensions, zero-dim tensors and C++ scalars (PyTorch's wrapped numbers).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

constexpr std::array<DType, 5> dtypes = {boolean, i32, i64, f32, f64};

/// torch.promote_types for two tensors of the same standing; rows and columns in `dtypes` order.
constexpr DType same_standing[5][5] = {
    /* bool */ {boolean, i32, i64, f32, f64},
    /* i32  */ {i32, i32, i64, f32, f64},
    /* i64  */ {i64, i64, i64, f32, f64},
    /* f32  */ {f32, f32, f32, f32, f64},
    /* f64  */ {f64, f64, f64, f64, f64},
};

/// A tensor with dimensions (row) against a zero-dim tensor (column): the zero-dim one only
/// matters when it is of a higher category (bool < integer < floating).
constexpr DType dim_with_zero_dim[5][5] = {
    /* bool */ {boolean, i32, i64, f32, f64},
    /* i32  */ {i32, i32, i32, f32, f64},
    /* i64  */ {i64, i64, i64, f32, f64},
    /* f32  */ {f32, f32, f32, f32, f32},
    /* f64  */ {f64, f64, f64, f64, f64},
};

/// A tensor (row) against a C++ scalar: bool, integer, floating. Float scalars count as the
/// default float f32, integer scalars as i64.
constexpr DType tensor_with_scalar[5][3] = {
    /* bool */ {boolean, i64, f32},
    /* i32  */ {i32, i32, f32},
    /* i64  */ {i64, i64, f32},
    /* f32  */ {f32, f32, f32},
    /* f64  */ {f64, f64, f64},
};

Tensor ones_of(DType t, Shape s, Device dev) {
  Array a = Array::empty(t, s);
  visit(t, [&]<class T>(Tag<T>) { std::fill_n(a.view.ptr<T>(), s.numel(), T(1)); });
  return tensor_from_array(a, dev);
}

class Promotion : public ::testing::TestWithParam<Device> {};

TEST_P(Promotion, TensorsWithDimensions) {
  Device dev = GetParam();
  for (std::size_t r = 0; r < dtypes.size(); ++r)
    for (std::size_t c = 0; c < dtypes.size(); ++c) {
      SCOPED_TRACE(testing::Message() << name(dtypes[r]) << " with " << name(dtypes[c]));
      Tensor a = ones_of(dtypes[r], {3}, dev), b = ones_of(dtypes[c], {2, 3}, dev);
      EXPECT_EQ((a + b).dtype(), same_standing[r][c]);
      EXPECT_EQ((b * a).dtype(), same_standing[c][r]);
      EXPECT_EQ(maximum(a, b).dtype(), same_standing[r][c]);
      EXPECT_EQ(where(b > 0, a, b).dtype(), same_standing[r][c]);
    }
}

TEST_P(Promotion, ZeroDimTensorsAmongThemselves) {
  Device dev = GetParam();
  for (std::size_t r = 0; r < dtypes.size(); ++r)
    for (std::size_t c = 0; c < dtypes.size(); ++c) {
      SCOPED_TRACE(testing::Message() << name(dtypes[r]) << " with " << name(dtypes[c]));
      EXPECT_EQ((ones_of(dtypes[r], {}, dev) + ones_of(dtypes[c], {}, dev)).dtype(), same_standing[r][c]);
    }
}

TEST_P(Promotion, DimensionedWithZeroDim) {
  Device dev = GetParam();
  for (std::size_t r = 0; r < dtypes.size(); ++r)
    for (std::size_t c = 0; c < dtypes.size(); ++c) {
      SCOPED_TRACE(testing::Message() << name(dtypes[r]) << "[3] with zero-dim " << name(dtypes[c]));
      Tensor a = ones_of(dtypes[r], {3}, dev), z = ones_of(dtypes[c], {}, dev);
      EXPECT_EQ((a + z).dtype(), dim_with_zero_dim[r][c]);
      EXPECT_EQ((z + a).dtype(), dim_with_zero_dim[r][c]);
    }
}

TEST_P(Promotion, TensorWithScalar) {
  Device dev = GetParam();
  for (std::size_t r = 0; r < dtypes.size(); ++r)
    for (Shape s : {Shape{3}, Shape{}}) {
      SCOPED_TRACE(testing::Message() << name(dtypes[r]) << s);
      Tensor a = ones_of(dtypes[r], s, dev);
      EXPECT_EQ((a + true).dtype(), tensor_with_scalar[r][0]);
      EXPECT_EQ((a * 2).dtype(), tensor_with_scalar[r][1]);
      EXPECT_EQ((std::int64_t{1} + a).dtype(), tensor_with_scalar[r][1]);
      EXPECT_EQ((a + 2.5).dtype(), tensor_with_scalar[r][2]);
      EXPECT_EQ((2.5f * a).dtype(), tensor_with_scalar[r][2]);
    }
}

TEST_P(Promotion, ExamplesFromPyTorch) {
  Device dev = GetParam();
  EXPECT_EQ((ones_of(i32, {3}, dev) + ones_of(f64, {}, dev)).dtype(), f64);
  EXPECT_EQ((ones_of(f32, {3}, dev) + ones_of(f64, {}, dev)).dtype(), f32);
  EXPECT_EQ((ones_of(i32, {3}, dev) + ones_of(i64, {}, dev)).dtype(), i32);
  EXPECT_EQ((ones_of(i32, {3}, dev) + 2.5).dtype(), f32);
  EXPECT_EQ((ones_of(boolean, {3}, dev) + 1).dtype(), i64);
  EXPECT_EQ((ones_of(f64, {3}, dev) + 1).dtype(), f64);
  // Ops with their own result rule still promote their operands first.
  EXPECT_EQ((ones_of(i32, {3}, dev) / ones_of(i32, {3}, dev)).dtype(), f32);
  EXPECT_EQ((ones_of(i64, {3}, dev) / ones_of(f64, {}, dev)).dtype(), f64);
  EXPECT_EQ((ones_of(i32, {3}, dev) < 2.5).dtype(), boolean);
  EXPECT_EQ(exp(ones_of(i32, {3}, dev)).dtype(), f32);
  EXPECT_EQ(exp(ones_of(f64, {3}, dev)).dtype(), f64);
}

TEST_P(Promotion, ValuesComputeInThePromotedType) {
  Device dev = GetParam();
  // The zero-dim f64 operand is rounded to f32 before adding, as PyTorch computes in f32.
  Tensor x = from_vector<float>({1.0f, 3.0f}, dev);
  Tensor z = from_vector<double>({0.1}, Shape{}, dev);
  std::vector<float> sum = (x + z).to_vector<float>();
  EXPECT_EQ(sum[0], 1.0f + 0.1f);
  EXPECT_EQ(sum[1], 3.0f + 0.1f);
  // i32 with an i64 zero-dim stays i32 and wraps like PyTorch's int32 arithmetic.
  Tensor big = from_vector<std::int32_t>({std::numeric_limits<std::int32_t>::max()}, dev);
  EXPECT_EQ((big + from_vector<std::int64_t>({1}, Shape{}, dev)).to_vector<std::int32_t>()[0],
            std::numeric_limits<std::int32_t>::min());
  // i32 with a zero-dim f64 computes in f64: 0.1 keeps its double value.
  EXPECT_EQ((from_vector<std::int32_t>({2}, dev) + from_vector<double>({0.1}, Shape{}, dev)).to_vector<double>()[0], 2 + 0.1);
  // A comparison computes in the promoted type: 2^24 + 1 as f32 equals 2^24.
  Tensor l = from_vector<std::int64_t>({16777217}, dev);
  EXPECT_TRUE((l == from_vector<float>({16777216.0f}, dev)).item<bool>());
  EXPECT_FALSE((l == from_vector<double>({16777216.0}, dev)).item<bool>());
  // bool + bool stays bool: true + true is true.
  Tensor t = from_vector<std::int32_t>({1, 0}, dev) > 0;
  std::vector<bool> both = (t + t).to_vector<bool>();
  EXPECT_TRUE(both[0]);
  EXPECT_FALSE(both[1]);
}

TEST_P(Promotion, MixedOperandsReadThroughBroadcastAndStridedLayouts) {
  Device dev = GetParam();
  constexpr std::int64_t N = 3, C = 4, H = 5, W = 6;
  std::vector<float> xs(N * C * H * W), cs(C);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  for (std::size_t c = 0; c < cs.size(); ++c) cs[c] = 10.0f + static_cast<float>(c);
  auto at = [&](std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    return xs[static_cast<std::size_t>(((n * C + c) * H + h) * W + w)];
  };
  Tensor x = from_vector<float>(xs, Shape{N, C, H, W}, dev);
  Tensor channel = expand(from_vector<float>(cs, Shape{1, C, 1, 1}, dev), Shape{N, C, H, W});

  // A bool mask, a channel's value broadcast over H x W and a zero-dim f64, in f32.
  std::vector<float> picked = where(x > 0, channel, from_vector<double>({0.25}, Shape{}, dev)).to_vector<float>();
  for (std::int64_t n = 0, i = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t w = 0; w < W; ++w, ++i)
          ASSERT_EQ(picked[static_cast<std::size_t>(i)], at(n, c, h, w) > 0 ? cs[static_cast<std::size_t>(c)] : 0.25f) << i;

  // A permuted view with an extent-1 dim, summed per channel and copied out whole.
  Tensor viewed = unsqueeze(permute(x, {2, 0, 3, 1}), 2);  // [H, N, 1, W, C]
  std::vector<float> sums = sum(viewed, {0, 1, 2, 3}).to_vector<float>();
  std::vector<float> copied = viewed.contiguous().to_vector<float>();
  for (std::int64_t c = 0; c < C; ++c) {
    double expected = 0;
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t w = 0; w < W; ++w) expected += at(n, c, h, w);
    EXPECT_NEAR(sums[static_cast<std::size_t>(c)], expected, 1e-4) << c;
  }
  for (std::int64_t h = 0, i = 0; h < H; ++h)
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t w = 0; w < W; ++w)
        for (std::int64_t c = 0; c < C; ++c, ++i) ASSERT_EQ(copied[static_cast<std::size_t>(i)], at(n, c, h, w)) << i;
}

TEST(PromotionRule, ThreeStandingsAtOnce) {
  // i32 with dimensions, an i64 zero-dim and a float scalar: the scalar's category wins over
  // both integer operands, giving the default float.
  Meta ms[] = {{Shape{3}, i32, false}, {Shape{}, i64, false}, {Shape{}, f64, true}};
  EXPECT_EQ(result_type(std::span<const Meta>(ms)), f32);
  Meta zd[] = {{Shape{3}, boolean, false}, {Shape{}, i32, false}, {Shape{}, f64, true}};
  EXPECT_EQ(result_type(std::span<const Meta>(zd)), f32);
  Meta wrapped_int[] = {{Shape{}, boolean, false}, {Shape{}, i64, true}};
  EXPECT_EQ(result_type(std::span<const Meta>(wrapped_int)), i64);
}

std::string device_name(const ::testing::TestParamInfo<Device>& info) { return info.param.is_lazy() ? "lazy" : "cpu"; }

INSTANTIATE_TEST_SUITE_P(Devices, Promotion, ::testing::Values(cpu, device()), device_name);

}  // namespace
}  // namespace lt

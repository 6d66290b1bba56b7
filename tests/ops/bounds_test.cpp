// Inputs at the edges of the integers: sizes whose products overflow raise lt::Error before
// anything is allocated, integer ops wrap as PyTorch's do (with no undefined behaviour), and
// windows, layer_norm's parameters and transpose's dims are checked as PyTorch checks them.
// Each runs on the eager device and on a lazy one.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min(), i64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int32_t i32_min = std::numeric_limits<std::int32_t>::min(), i32_max = std::numeric_limits<std::int32_t>::max();

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no lt::Error was raised";
  return {};
}

class Bounds : public ::testing::TestWithParam<Device> {
 protected:
  Device dev() const { return GetParam(); }
  template <class T> Tensor values(std::vector<T> v) const { return from_vector<T>(v, dev()); }
};

TEST_P(Bounds, SizesWhoseCountsOverflowRaiseBeforeAnyAllocation) {
  const std::int64_t big = std::int64_t{1} << 62, two32 = std::int64_t{1} << 32;
  std::string m = error_of([&] { Tensor t = zeros({big, 4}, dev()); sync(); });
  EXPECT_NE(m.find("overflows"), std::string::npos) << m;
  error_of([&] { Tensor t = zeros({two32, two32}, dev()); });
  error_of([&] { Tensor t = full({i64_max}, 1.0f, dev()); });                   // the byte count overflows
  error_of([&] { Tensor t = zeros({0, two32, two32}, dev()); });               // no element, but its strides overflow
  error_of([&] { Tensor t = ones({3}, dev()).expand({i64_max, 3}); });
  EXPECT_EQ(zeros({0, two32}, dev()).numel(), 0);  // fits: made
  if (dev().is_lazy()) EXPECT_NO_THROW(sync());    // the failed calls recorded nothing
}

TEST_P(Bounds, Conv2dWithHugePaddingOrAKernelPastTheInputRaises) {
  Tensor x = ones({1, 1, 4, 4}, dev()), w = ones({1, 1, 3, 3}, dev());
  const std::int64_t huge = std::int64_t{1} << 61;
  error_of([&] { conv2d(x, w, std::nullopt, 1, Pair2{huge, huge}); });
  Tensor small = ones({1, 1, 2, 2}, dev());
  std::string m = error_of([&] { conv2d(small, w, std::nullopt, 2); });  // once a 1x1 result
  EXPECT_NE(m.find("conv2d"), std::string::npos) << m;
  EXPECT_EQ(conv2d(small, w, std::nullopt, 2, 1).shape(), (Shape{1, 1, 1, 1}));  // padded to 4x4: fits
}

TEST_P(Bounds, PoolsWithAWindowPastThePaddedInputRaiseAsPyTorch) {
  Tensor x = ones({1, 1, 2, 2}, dev());
  std::string m = error_of([&] { max_pool2d(x, 3); });
  EXPECT_NE(m.find("max_pool2d"), std::string::npos) << m;
  EXPECT_NE(m.find("larger than the padded input"), std::string::npos) << m;
  error_of([&] { avg_pool2d(x, 3); });
  error_of([&] { max_pool2d(ones({1, 1, 4, 4}, dev()), 2, 1, 0, 4); });  // dilated past the input
  // As in PyTorch: ceil_mode lets a last window start inside the input, and padding counts.
  EXPECT_EQ(max_pool2d(x, 3, std::nullopt, 0, 1, /*ceil_mode=*/true).shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(avg_pool2d(x, 3, 1, 1).shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(max_pool2d(x, 2).shape(), (Shape{1, 1, 1, 1}));
}

TEST_P(Bounds, IntegerOpsWrapAsPyTorchDoes) {
  Tensor a = values<std::int64_t>({i64_min, i64_max, -7, 3});
  EXPECT_EQ((-a).to_vector<std::int64_t>(), (std::vector<std::int64_t>{i64_min, -i64_max, 7, -3}));
  EXPECT_EQ(abs(a).to_vector<std::int64_t>(), (std::vector<std::int64_t>{i64_min, i64_max, 7, 3}));
  EXPECT_EQ(Tensor(a * 2).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, -2, -14, 6}));
  EXPECT_EQ(Tensor(a + 1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{i64_min + 1, i64_min, -6, 4}));
  EXPECT_EQ(Tensor(a - 1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{i64_max, i64_max - 1, -8, 2}));
  // fmod by -1 is 0 for every value; INT_MIN % -1 traps in C++.
  EXPECT_EQ(fmod(a, values<std::int64_t>({-1, -1, -1, -1})).to_vector<std::int64_t>(), (std::vector<std::int64_t>(4, 0)));
  Tensor b = values<std::int32_t>({i32_min, i32_max});
  EXPECT_EQ(fmod(b, values<std::int32_t>({-1, -1})).to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, 0}));
  EXPECT_EQ((-b).to_vector<std::int32_t>(), (std::vector<std::int32_t>{i32_min, -i32_max}));
  EXPECT_EQ(Tensor(b * b).to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, 1}));
  // 3^50 and 7^30 modulo 2^64, as PyTorch's integer pow gives them.
  std::uint64_t p3 = 1, p7 = 1;
  for (int k = 0; k < 50; ++k) p3 *= 3;
  for (int k = 0; k < 30; ++k) p7 *= 7;
  Tensor base = values<std::int64_t>({3, 7, -1, 2}), exponent = values<std::int64_t>({50, 30, i64_max, 64});
  EXPECT_EQ(pow(base, exponent).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{static_cast<std::int64_t>(p3), static_cast<std::int64_t>(p7), -1, 0}));
}

TEST_P(Bounds, LayerNormTakesWeightAndBiasOfTheNormalizedShapeOnly) {
  Tensor x = ones({2, 2, 4}, dev());
  std::string m = error_of([&] { layer_norm(x, {4}, ones({2, 1, 4}, dev()), ones({4}, dev())); });
  EXPECT_NE(m.find("weight must have normalized_shape [4]"), std::string::npos) << m;
  m = error_of([&] { layer_norm(x, {4}, ones({4}, dev()), ones({1, 4}, dev())); });
  EXPECT_NE(m.find("bias must have normalized_shape [4]"), std::string::npos) << m;
  EXPECT_EQ(layer_norm(x, {2, 4}, ones({2, 4}, dev()), zeros({2, 4}, dev())).shape(), (Shape{2, 2, 4}));
}

TEST_P(Bounds, TransposeOfAZeroDimTensorChecksItsDims) {
  Tensor s = full({}, 2.0f, dev());
  std::string m = error_of([&] { s.transpose(5, 7); });
  EXPECT_NE(m.find("transpose"), std::string::npos) << m;
  error_of([&] { s.transpose(0, 1); });
  EXPECT_EQ(s.transpose(0, -1).item<float>(), 2.0f);  // rank 0 takes -1 and 0, as PyTorch
}

INSTANTIATE_TEST_SUITE_P(Devices, Bounds, ::testing::Values(cpu, device()),
                         [](const auto& info) { return info.param.is_lazy() ? std::string("lazy") : std::string("cpu"); });

}  // namespace
}  // namespace lt

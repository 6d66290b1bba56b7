// maximum and minimum in packets (mask registers where the CPU has AVX-512, the portable
// selects elsewhere) hold to their scalar forms bit for bit: which NaN of two wins, which
// zero of +0 and -0, infinities and subnormals, in every lane and in the scalar tail.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt::test {
namespace {

template <class T> T from_bits(std::uint64_t bits) {
  T x;
  if constexpr (sizeof(T) == 4) {
    const auto b = static_cast<std::uint32_t>(bits);
    std::memcpy(&x, &b, sizeof x);
  } else {
    std::memcpy(&x, &bits, sizeof x);
  }
  return x;
}

/// Values of every class, two NaNs told apart by sign and payload among them.
template <class T> std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  const bool f32 = sizeof(T) == 4;
  return {T(0), -T(0), T(1), T(-1), T(2.5), L::denorm_min(), -L::denorm_min(), L::max(), -L::max(), L::infinity(),
          -L::infinity(), L::quiet_NaN(), from_bits<T>(f32 ? 0xffc00123u : 0xfff8000000000123u)};
}

template <class Fn, class T> void expect_scalar_bits(const char* name) {
  const std::vector<T> v = special_values<T>();
  // Every pair, laid out so that each lands in packet lanes and again in the scalar tail.
  std::vector<T> a, b;
  for (T x : v)
    for (T y : v) {
      a.push_back(x);
      b.push_back(y);
    }
  const std::size_t pairs = a.size();
  a.insert(a.end(), a.begin(), a.begin() + 3);
  b.insert(b.end(), b.begin() + 5, b.begin() + 8);
  std::vector<T> out(a.size());
  const void* src[2] = {a.data(), b.data()};
  const Fn fn;
  kernels::apply_loop<T, 2, Fn>(src, out.data(), static_cast<std::int64_t>(out.size()), &fn);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const T want = fn(a[i], b[i]);
    EXPECT_EQ(std::memcmp(&out[i], &want, sizeof want), 0)
        << name << "(" << a[i] << ", " << b[i] << ") gave " << out[i] << " at " << i << (i < pairs ? " (packet)" : " (tail)");
  }
}

TEST(MinMaxPackets, GiveTheScalarFormsBitsForEveryPairOfSpecialValues) {
  expect_scalar_bits<binary::Maximum, float>("maximum");
  expect_scalar_bits<binary::Minimum, float>("minimum");
  expect_scalar_bits<binary::Maximum, double>("maximum");
  expect_scalar_bits<binary::Minimum, double>("minimum");
}

TEST(MinMaxPackets, ScalarFormsFollowTorch) {
  const binary::Maximum max;
  const binary::Minimum min;
  const float nan = std::numeric_limits<float>::quiet_NaN(), other_nan = from_bits<float>(0xffc00123u);
  // The first operand's NaN where both are NaN; -0 and +0 tie, and the first operand stays.
  EXPECT_EQ(std::bit_cast<std::uint32_t>(max(other_nan, nan)), 0xffc00123u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(min(nan, other_nan)), std::bit_cast<std::uint32_t>(nan));
  EXPECT_TRUE(std::isnan(max(1.0f, nan)) && std::isnan(min(nan, -1.0f)));
  EXPECT_TRUE(std::signbit(max(-0.0f, 0.0f)) && !std::signbit(max(0.0f, -0.0f)));
  EXPECT_EQ(max(-1.0f, 2.0f), 2.0f);
  EXPECT_EQ(min(-1.0f, 2.0f), -1.0f);
}

}  // namespace
}  // namespace lt::test

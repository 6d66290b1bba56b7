// Division by one divisor (a C++ scalar, a 0-dim tensor, a row's sum) multiplies by the
// reciprocal and corrects the product where the hardware has FMA; these tests hold it to the
// bits of plain division for every class of value, in its packet and scalar forms and through
// the lazy ops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt::test {
namespace {

template <class T> bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

/// Values of every class: zeros, subnormals, values near the edges of the fast range, the
/// extremes, infinities, NaN, and random bit patterns (any sign and exponent).
template <class T> std::vector<T> every_class(std::size_t random_count, std::uint64_t seed) {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {T(0),       -T(0),          T(1),           T(-1),         T(3),          T(0.1),
                      L::min(),   -L::min(),      L::denorm_min(), L::max(),      -L::max(),     L::infinity(),
                      -L::infinity(), L::quiet_NaN(), L::epsilon(),  std::ldexp(T(1), -100), std::ldexp(T(1), 100),
                      std::ldexp(T(1.5), -101), std::ldexp(T(1.75), 101), std::ldexp(T(1), -900), std::ldexp(T(1), 900)};
  std::mt19937_64 gen(seed);
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  for (std::size_t i = 0; i < random_count; ++i) {
    Bits b = static_cast<Bits>(gen());
    T x;
    std::memcpy(&x, &b, sizeof x);
    v.push_back(x);
  }
  // Values a softmax divides: exp of a row's shifted values, in (0, 1].
  std::normal_distribution<double> normal;
  for (std::size_t i = 0; i < random_count; ++i) v.push_back(static_cast<T>(std::exp(-std::abs(3 * normal(gen)))));
  return v;
}

template <class T> void expect_division_bits(std::uint64_t seed) {
  const std::vector<T> dividends = every_class<T>(20000, seed), divisors = every_class<T>(40, seed + 1);
  std::vector<T> quotients(dividends.size());
  for (T b : divisors) {
    const void* src[2] = {dividends.data(), &b};
    binary::Div div;
    // The packet form (with the scalar form for the tail), as a kernel runs it.
    kernels::apply_uniform_last_loop<T, 2, binary::Div>(src, quotients.data(), static_cast<std::int64_t>(dividends.size()), &div);
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < dividends.size(); ++i) wrong += !same_bits(quotients[i], dividends[i] / b);
    EXPECT_EQ(wrong, 0) << "divisor " << b;
  }
}

TEST(DivideBy, GivesTheBitsOfDivisionForEveryClassOfValue) {
#if defined(EIGEN_VECTORIZE_FMA)
  // Built for a CPU with FMA (the native tests), the corrected product is what runs.
  EXPECT_TRUE(kernels::pk::DivideBy<float>::fused && kernels::pk::DivideBy<double>::fused);
  EXPECT_TRUE(kernels::pk::DivideBy<float>(3.0f).refine);
#endif
  for (float b : {0.37f, 1.0f, 1e6f, -2.5e-6f}) {
    const kernels::pk::DivideBy<float> by(b);
    for (float a : {1.0f, -7.25f, 0.1f, 3e20f, 1e-30f, 0.0f}) EXPECT_TRUE(same_bits(by(a), a / b)) << a << " / " << b;
  }
  expect_division_bits<float>(1);
  expect_division_bits<double>(2);
}

TEST(DivideBy, LazyDivisionByOneValueHasTheBitsOfPlainDivision) {
  const std::int64_t rows = 37, cols = 301;  // odd sizes: packet tails in every row
  std::vector<float> values = every_class<float>(static_cast<std::size_t>(rows * cols), 7);
  values.resize(static_cast<std::size_t>(rows * cols));
  Tensor x = from_vector(values, Shape{rows, cols}, device());
  std::vector<float> row_div(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) row_div[static_cast<std::size_t>(r)] = 0.37f + static_cast<float>(r) * 1.3f;
  Tensor d = from_vector(row_div, Shape{rows, 1}, device()), one = from_vector(std::vector<float>{7.1f}, Shape{}, device());
  Tensor z = randn({rows, cols}, device()) * 4.0f;
  sync();
  // The last as softmax writes it: the row sum divides in the same fused group.
  Tensor by_scalar = x / 3.0f, by_tensor = x / one, by_row = x / d, by_row_sum = exp(z) / sum(exp(z), 1, true);
  sync();
  std::vector<float> s = by_scalar.to_vector<float>(), t = by_tensor.to_vector<float>(), r = by_row.to_vector<float>();
  std::vector<float> e = exp(z).to_vector<float>(), total = sum(exp(z), 1, true).to_vector<float>();
  std::vector<float> q = by_row_sum.to_vector<float>();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const auto k = static_cast<std::size_t>(i), row = static_cast<std::size_t>(i / cols);
    wrong += !same_bits(s[k], values[k] / 3.0f);
    wrong += !same_bits(t[k], values[k] / 7.1f);
    wrong += !same_bits(r[k], values[k] / row_div[row]);
    wrong += !same_bits(q[k], e[k] / total[row]);
  }
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace lt::test

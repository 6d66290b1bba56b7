#pragma once
// Helpers of the nn tests: values as doubles, and tensors from plain values.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>

namespace lt::test {

inline std::vector<double> values(const Tensor& t) { return t.to(f64).to_vector<double>(); }

inline void expect_values_near(const Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  std::vector<double> v = values(t);
  ASSERT_EQ(v.size(), expected.size());
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], expected[i], tol * (1 + std::abs(expected[i]))) << "element " << i;
}

/// f64 values uniform in [lo, hi), seeded.
inline Tensor uniform_f64(Shape shape, std::uint64_t seed, double lo = -1, double hi = 1) {
  manual_seed(seed);
  return Tensor(rand(shape, cpu, f64) * (hi - lo) + lo);
}

}  // namespace lt::test

#pragma once
// Helpers of the nn tests: values as doubles, and tensors from plain values.
#include <cstdint>
#include <functional>
#include <string>
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

/// The message of the lt::Error `f` raises, or "no error".
inline std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

/// The compute nodes' lines of the graph of `ts` (device_data leaves left out), in order.
inline std::vector<std::string> node_lines(const std::vector<Tensor>& ts) {
  std::vector<std::string> lines;
  const std::string ir = debug::ir_text(ts);
  for (std::size_t at = ir.find("\n  %"); at != std::string::npos; at = ir.find("\n  %", at + 1)) {
    std::string line = ir.substr(at + 1, ir.find('\n', at + 1) - at - 1);
    if (line.find("device_data") == std::string::npos) lines.push_back(line);
  }
  return lines;
}

/// Every compute node of the graph of `ts` names `site`; there are at least `at_least`.
inline void expect_all_at(const std::vector<Tensor>& ts, const std::string& site, std::size_t at_least) {
  const std::vector<std::string> lines = node_lines(ts);
  EXPECT_GE(lines.size(), at_least) << debug::ir_text(ts);
  for (const std::string& line : lines) EXPECT_NE(line.find("  # " + site), std::string::npos) << line;
}

}  // namespace lt::test

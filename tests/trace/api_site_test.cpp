// The LibTorch-style forms (add and sub with alpha, the in-place methods, max and min along a
// dim) record every op they make at the line that called them, as the op table's functions do.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

std::string here(int line) { return "trace/api_site_test.cpp:" + std::to_string(line); }

/// Every compute node of the graph of `ts` (device_data leaves left out) names `site`, and
/// there are at least `at_least` of them.
void expect_all_at(const std::vector<Tensor>& ts, const std::string& site, std::size_t at_least) {
  const std::string ir = debug::ir_text(ts);
  std::size_t nodes = 0;
  for (std::size_t at = ir.find("\n  %"); at != std::string::npos; at = ir.find("\n  %", at + 1)) {
    const std::string line = ir.substr(at + 1, ir.find('\n', at + 1) - at - 1);
    if (line.find("device_data") != std::string::npos) continue;
    ++nodes;
    EXPECT_NE(line.find("  # " + site), std::string::npos) << line << "\n" << ir;
  }
  EXPECT_GE(nodes, at_least) << ir;
}

class ApiSites : public ::testing::Test {
 protected:
  void SetUp() override { sync(); }
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, device());
  Tensor w = from_vector<float>({0.5f, -1, 2}, {3}, device());
};

TEST_F(ApiSites, AddAndSubWithAlpha) {
  Tensor a = lt::add(x, w, 2.5);
  expect_all_at({a}, here(__LINE__ - 1), 2);  // the scaling and the sum
  Tensor s = x.sub(w, 3);
  expect_all_at({s}, here(__LINE__ - 1), 2);
  Tensor i = lt::add(from_vector<std::int64_t>({1, 2}, {2}, device()), from_vector<std::int32_t>({3, 4}, {2}, device()), 2);
  expect_all_at({i}, here(__LINE__ - 1), 3);  // the cast of the i32 operand too
}

TEST_F(ApiSites, InPlaceMethods) {
  // Fresh tensors: an in-place op rebinds every handle of its tensor (x's too, were t = x).
  Tensor t = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, device());
  t.add_(w, 2);
  expect_all_at({t}, here(__LINE__ - 1), 2);
  Tensor u = from_vector<float>({1, 2, 3}, {3}, device());
  u.mul_(0.5);
  expect_all_at({u}, here(__LINE__ - 1), 1);
  Tensor f = from_vector<float>({1, 2, 3}, {3}, device());
  f.div_(from_vector<double>({2, 4, 8}, {3}, device()));  // f64 quotient cast back to f32
  expect_all_at({f}, here(__LINE__ - 1), 2);
}

TEST_F(ApiSites, MaxAndMinAlongADim) {
  auto [values, indices] = lt::max(x, 1);
  expect_all_at({values, indices}, here(__LINE__ - 1), 3);  // argmax, gather, squeezes
  auto [mv, mi] = x.min(0, true);
  expect_all_at({mv, mi}, here(__LINE__ - 1), 2);
  Tensor m = x.max();
  expect_all_at({m}, here(__LINE__ - 1), 1);
  Tensor e = lt::min(x, Tensor(x * 0.5));
  expect_all_at({e}, here(__LINE__ - 1), 1);  // minimum itself (x * 0.5 is this line too)
}

}  // namespace
}  // namespace lt

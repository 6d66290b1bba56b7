// Each recorded op keeps the line of user code that recorded it, whatever form recorded it: an
// operator, a named function, a method, an expression converted to a Tensor, an assignment, a
// composite. ir_text and ir_dot show it; a node's hash never sees it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

/// "trace/site_test.cpp:N" for line N of this file, as the dumps write it.
std::string here(int line) { return "trace/site_test.cpp:" + std::to_string(line); }

/// The ir_text line of `t`'s own node (the last node line before the roots).
std::string own_line(const Tensor& t) {
  const std::string ir = debug::ir_text({t});
  const std::size_t roots = ir.find("  ROOT");
  const std::size_t start = ir.rfind("\n  %", roots - 1) + 1;
  return ir.substr(start, roots - start - 1);
}

/// Whether `t`'s node line names `site` (with nothing after it).
::testing::AssertionResult recorded_at(const Tensor& t, const std::string& site) {
  const std::string line = own_line(t);
  const std::string tail = "  # " + site;
  if (line.size() >= tail.size() && line.compare(line.size() - tail.size(), tail.size(), tail) == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected \"" << line << "\" to end in \"" << tail << "\"\n"
                                       << debug::ir_text({t});
}

class Sites : public ::testing::Test {
 protected:
  void SetUp() override { sync(); }
  Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 2}, device());
  Tensor w = from_vector<float>({0.5f, -1, 2, 0.25f}, {2, 2}, device());
};

TEST_F(Sites, TheTextIsTheLastTwoPathComponentsAndTheLine) {
  EXPECT_EQ(site_text(Site::current()), here(__LINE__));
  EXPECT_EQ(site_text(Site{}), "") << "an unknown site has no text";
}

TEST_F(Sites, AnOperator) {
  Tensor y = x + w;
  EXPECT_TRUE(recorded_at(y, here(__LINE__ - 1)));
  Tensor z = 2.0 * x;  // the scalar on the left
  EXPECT_TRUE(recorded_at(z, here(__LINE__ - 1)));
  Tensor n = -x;
  EXPECT_TRUE(recorded_at(n, here(__LINE__ - 1)));
  Tensor c = x < w;
  EXPECT_TRUE(recorded_at(c, here(__LINE__ - 1)));
}

TEST_F(Sites, ANamedFunction) {
  Tensor y = exp(x);
  EXPECT_TRUE(recorded_at(y, here(__LINE__ - 1)));
  Tensor s = sum(x, 1);
  EXPECT_TRUE(recorded_at(s, here(__LINE__ - 1)));
  Tensor m = matmul(x, w);
  EXPECT_TRUE(recorded_at(m, here(__LINE__ - 1)));
  Tensor r = reshape(x, {4});
  EXPECT_TRUE(recorded_at(r, here(__LINE__ - 1)));
  Tensor f = full({3}, 1.5, device());
  EXPECT_TRUE(recorded_at(f, here(__LINE__ - 1)));
}

TEST_F(Sites, AMethod) {
  Tensor y = x.relu();
  EXPECT_TRUE(recorded_at(y, here(__LINE__ - 1)));
  Tensor t = x.t();
  EXPECT_TRUE(recorded_at(t, here(__LINE__ - 1)));
  Tensor s = x.sum();
  EXPECT_TRUE(recorded_at(s, here(__LINE__ - 1)));
  Tensor c = x.to(DType::f64);
  EXPECT_TRUE(recorded_at(c, here(__LINE__ - 1)));
  Tensor p = x.pow(2);
  EXPECT_TRUE(recorded_at(p, here(__LINE__ - 1)));
}

TEST_F(Sites, AnExpressionNamesTheLineItIsWrittenOn) {
  auto e = relu(x * w + 1.0);  // nothing recorded yet
  const int written = __LINE__ - 1;
  std::vector<Tensor> kept;
  kept.push_back(e);  // converted to a Tensor here: one fragment node
  EXPECT_TRUE(recorded_at(kept[0], here(written)));
  EXPECT_NE(own_line(kept[0]).find("fragment{"), std::string::npos) << own_line(kept[0]);
  // A non-elementwise method on an expression: the fragment where it was written, the
  // reduction where it is called.
  Tensor s = (x - w).abs().sum();
  EXPECT_TRUE(recorded_at(s, here(__LINE__ - 1)));
}

TEST_F(Sites, AssignmentsAndInPlaceForms) {
  Tensor y = x;
  y = y * 3.0;  // rebinds y's own state: the new node still names this line
  EXPECT_TRUE(recorded_at(y, here(__LINE__ - 1)));
  y += 1.0;
  EXPECT_TRUE(recorded_at(y, here(__LINE__ - 1)));
  y *= w;
  EXPECT_TRUE(recorded_at(y, here(__LINE__ - 1)));
}

TEST_F(Sites, ACompositeNamesTheCallerForEveryOpItRecords) {
  Tensor p = softmax(x, 1);
  const std::string at = here(__LINE__ - 1);
  const std::string ir = debug::ir_text({p});
  int nodes = 0;
  std::size_t from = 0;
  for (std::size_t at_line; (at_line = ir.find("\n  %", from)) != std::string::npos; from = at_line + 1) {
    const std::string line = ir.substr(at_line + 1, ir.find('\n', at_line + 1) - at_line - 1);
    if (line.find("device_data") != std::string::npos) continue;
    EXPECT_NE(line.find("  # " + at), std::string::npos) << line << "\n" << ir;
    ++nodes;
  }
  EXPECT_GE(nodes, 4) << ir;  // amax, the shifted exp, sum, div
}

/// A helper of the user's own that takes its caller's line, as the library's functions do.
Tensor scaled_tanh(const Tensor& t, Site site = Site::current()) {
  RecordingSite at(site);
  Tensor h = tanh(t);
  return h * 0.5;
}

TEST_F(Sites, AUserHelperCanPassItsCallersLineOn) {
  Tensor y = scaled_tanh(x);
  const std::string at = here(__LINE__ - 1);
  EXPECT_TRUE(recorded_at(y, at));
  EXPECT_NE(debug::ir_text({y}).find("tanh(%0) f32[2, 2]  # " + at), std::string::npos) << debug::ir_text({y});
}

TEST_F(Sites, FixedTensorsNameTheirLinesToo) {
  FixedTensor<2, 2> a(x), b(w);
  auto e = a * b + 1.0;  // operators on static shapes: still an expression
  const int written = __LINE__ - 1;
  Tensor y = e;
  EXPECT_TRUE(recorded_at(y, here(written)));
  Tensor m = matmul(a, b);
  EXPECT_TRUE(recorded_at(m, here(__LINE__ - 1)));
  Tensor s = sum<1>(a);
  EXPECT_TRUE(recorded_at(s, here(__LINE__ - 1)));
  Tensor n = -a;
  EXPECT_TRUE(recorded_at(n, here(__LINE__ - 1)));
}

TEST_F(Sites, DotLabelsNameTheLine) {
  Tensor y = exp(x);
  const std::string at = here(__LINE__ - 1);
  const std::string dot = debug::ir_dot({y});
  EXPECT_NE(dot.find("n1 [label=\"exp\\nf32[2, 2]\\n" + at + "\"];"), std::string::npos) << dot;
}

TEST_F(Sites, TheLineNeverEntersTheHash) {
  Tensor a = x * w + 1.0;
  Tensor b = x * w + 1.0;  // the same op from another line
  EXPECT_NE(own_line(a), own_line(b));
  EXPECT_EQ(a.impl().node->hash, b.impl().node->hash);
  Tensor c = matmul(x, w);
  Tensor d = matmul(x, w);
  EXPECT_EQ(c.impl().node->hash, d.impl().node->hash);
}

TEST_F(Sites, DataHasNoLine) {
  const std::string ir = debug::ir_text({x});
  EXPECT_NE(ir.find("  %0 = device_data() f32[2, 2]\n"), std::string::npos) << ir;
}

}  // namespace
}  // namespace lt

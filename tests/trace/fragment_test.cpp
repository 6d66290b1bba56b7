// Expressions and fragments: an elementwise expression records nothing until it becomes a
// Tensor, then one node whose fused kernel gives bitwise the op-by-op result.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

#include "fragment_probe.hpp"
#include "trace_helpers.hpp"

namespace lt {
namespace {

using testing_helpers::compute_nodes;
using testing_helpers::runs;

/// Bitwise equality of two float tensors' values, NaNs included.
template <class T>
void expect_same_bits(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  std::vector<T> g = got.to_vector<T>(), w = want.to_vector<T>();
  for (std::size_t k = 0; k < g.size(); ++k)
    ASSERT_EQ(std::memcmp(&g[k], &w[k], sizeof(T)), 0) << "element " << k << ": " << g[k] << " vs " << w[k];
}

class Fragment : public ::testing::Test {
 protected:
  void SetUp() override {
    sync();
    metrics::reset();
  }
  Tensor a = randn({64, 33}, device()), b = randn({64, 33}, device()), c = randn({33}, device());
};

TEST_F(Fragment, AnExpressionRecordsNothingUntilItBecomesATensor) {
  sync();
  metrics::reset();
  auto e = relu(a * b + c) * 0.5f;
  EXPECT_EQ(e.shape(), (Shape{64, 33})) << "shape and dtype are known without recording";
  EXPECT_EQ(e.dtype(), f32);
  sync();
  EXPECT_EQ(metrics::timer("ExecuteTime").count, 0) << "nothing was pending";
  EXPECT_EQ(runs("mul") + runs("add") + runs("relu") + runs("fragment"), 0);

  Tensor y = e;
  std::string ir = debug::ir_text({y});
  EXPECT_EQ(compute_nodes(ir), 1) << ir;
  EXPECT_NE(ir.find("= fragment{mul(relu(add(mul(%0, %1), %2)), 0.5)} f32[64, 33]"), std::string::npos) << ir;
  // The fragment's own shape rule, walking its body, agrees with what tracing found.
  const Node& node = *y.impl().node;
  std::vector<Meta> metas;
  for (const NodePtr& in : node.inputs) metas.push_back(in->meta);
  Meta inferred = node.op->infer(metas, node.attrs);
  EXPECT_EQ(inferred.shape, node.meta.shape);
  EXPECT_EQ(inferred.dtype, node.meta.dtype);
  sync();
  EXPECT_EQ(runs("fragment"), 1);
  EXPECT_EQ(runs("mul"), 2) << "a fragment's ops are counted as they run fused";
}

TEST_F(Fragment, MatchesTheOpsTracedOneByOneBitwise) {
  Tensor y = relu(a * b + c) * 0.5f - b;
  Tensor ab = a * b, s = ab + c, r = relu(s), h = r * 0.5f, want = h - b;
  expect_same_bits<float>(y, want);

  // Transcendental, comparisons, where, maximum with NaN, division, scalars on the left.
  Tensor n = where(a > 1.0f, Tensor(a * NAN), a);
  sync();
  Tensor z = maximum(exp(n) / (1.5 - b), sigmoid(c)) + (a <= b) * 2.0f;
  EXPECT_EQ(compute_nodes(debug::ir_text({z})), 1);
  Tensor t1 = exp(n), t2 = 1.5 - b, t3 = t1 / t2, t4 = sigmoid(c), t5 = maximum(t3, t4), t6 = a <= b,
         t7 = t6 * 2.0f, want2 = t5 + t7;
  expect_same_bits<float>(z, want2);

  // f64 and stateful ops (their attributes travel with the node).
  Tensor d = a.to(f64), e = b.to(f64);
  Tensor g = clamp(gelu(d, "tanh") * e, -0.25, 0.5) + softplus(e, 2.0);
  Tensor g1 = gelu(d, "tanh"), g2 = g1 * e, g3 = clamp(g2, -0.25, 0.5), g4 = softplus(e, 2.0), want3 = g3 + g4;
  expect_same_bits<double>(g, want3);
}

TEST_F(Fragment, AConstantSecondOperandGivesTheBitsOfTheOpOnEveryClassOfValue) {
  // maximum, minimum and division by a constant run in their fixed-operand forms (one max
  // instruction where the bound is not NaN; a reciprocal product, corrected); each must give
  // what a plain loop gives, for NaNs (of either operand), signed zeros, infinities and
  // subnormals, in packets and in the tail (1,001 values).
  const float inf = INFINITY, nan = NAN;
  std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, -2.5f, inf, -inf, nan, -nan, 1e-40f, -1e-40f, 3e38f, 0.1f};
  for (int k = 0; values.size() < 1001; ++k) values.push_back(std::ldexp(static_cast<float>((k * 7919) % 2001 - 1000) / 1000.0f, k % 60 - 30));
  Tensor x = from_vector(values, Shape{1001}, device());
  auto torch_max = [](float a, float b) { return a != a ? a : b != b ? b : a < b ? b : a; };
  auto torch_min = [](float a, float b) { return a != a ? a : b != b ? b : b < a ? b : a; };
  for (float bound : {0.0f, -0.0f, 2.5f, -inf, nan}) {
    Tensor hi = maximum(x * 1.0f, bound), lo = minimum(x * 1.0f, bound);
    std::vector<float> got_hi = hi.to_vector<float>(), got_lo = lo.to_vector<float>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float want_hi = torch_max(values[i], bound), want_lo = torch_min(values[i], bound);
      ASSERT_EQ(std::memcmp(&got_hi[i], &want_hi, sizeof(float)), 0) << "maximum(" << values[i] << ", " << bound << ")";
      ASSERT_EQ(std::memcmp(&got_lo[i], &want_lo, sizeof(float)), 0) << "minimum(" << values[i] << ", " << bound << ")";
    }
  }
  for (float divisor : {3.0f, 0.1f, -7.0f, 1e-30f, 0.0f, nan}) {
    std::vector<float> got = (x * 1.0f / divisor).to_vector<float>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float want = values[i] / divisor;
      ASSERT_TRUE(std::memcmp(&got[i], &want, sizeof(float)) == 0 || (std::isnan(got[i]) && std::isnan(want)))
          << values[i] << " / " << divisor << " gave " << got[i];
    }
  }
}

TEST_F(Fragment, BroadcastsStridedOperandsAndRepeatedTensors) {
  Tensor wide = randn({64, 66}, device());
  Tensor strided = wide.slice(1, 0, std::nullopt, 2);  // [64, 33], every other column
  Tensor col = randn({64, 1}, device());
  Tensor y = strided * strided + col * c - strided;
  std::string ir = debug::ir_text({y});
  // The walk numbers data (c, %2) before computed values (col, %3).
  EXPECT_NE(ir.find("fragment{sub(add(mul(%1, %1), mul(%3, %2)), %1)}"), std::string::npos) << ir;
  Tensor s1 = strided * strided, s2 = col * c, s3 = s1 + s2, want = s3 - strided;
  expect_same_bits<float>(y, want);

  // A tensor used three times is one input of the node.
  Tensor x = from_vector<float>({1, 2, 3}, device());
  Tensor cube = x * x * x;
  EXPECT_EQ(cube.to_vector<float>(), (std::vector<float>{1, 8, 27}));
}

TEST_F(Fragment, RunsOnTheEagerDeviceAtOnce) {
  Tensor x = from_vector<float>({-1, 0.5f, 2, 4});
  Tensor y = relu(x * 2 + 1) * 0.5f;
  EXPECT_EQ(runs("fragment"), 1);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 1, 2.5f, 4.5f}));
}

TEST_F(Fragment, MixedComputeTypesRecordOpByOne) {
  // i32 products wrap in i32 one by one; fused in i64 they would not, so this is not fused.
  Tensor i = from_vector<std::int32_t>({1 << 20, 3}, device());
  Tensor y = i * i + 1;
  std::string ir = debug::ir_text({y});
  EXPECT_EQ(compute_nodes(ir), 3) << ir;  // mul, scalar, add
  Tensor sq = i * i, want = sq + 1;
  EXPECT_EQ(y.to_vector<std::int32_t>(), want.to_vector<std::int32_t>());

  // i64 computes in i64 throughout: fused, exact.
  Tensor l = from_vector<std::int64_t>({-7, 5, 1 << 20}, device());
  Tensor m = (l * l - 3) * -l;
  EXPECT_EQ(compute_nodes(debug::ir_text({m})), 1);
  constexpr std::int64_t big = std::int64_t{1} << 20;
  EXPECT_EQ(m.to_vector<std::int64_t>(), (std::vector<std::int64_t>{(49 - 3) * 7, -(25 - 3) * 5, -(big * big - 3) * big}));
}

TEST_F(Fragment, BadOperandsFailWhereTheOpIsWrittenAndRecordNothing) {
  Tensor v = randn({5}, device()), two = from_vector<float>({1, 2}, device()), host = randn({64, 33});
  sync();
  metrics::reset();
  try {
    auto e = relu(a * b) + v;
    (void)e;
    ADD_FAILURE() << "no lt::Error";
  } catch (const Error& err) {
    std::string m = err.what();
    EXPECT_NE(m.find("add"), std::string::npos) << m;
    EXPECT_NE(m.find("f32[64, 33]"), std::string::npos) << m;
    EXPECT_NE(m.find("f32[5]"), std::string::npos) << m;
  }
  EXPECT_THROW((void)(a * two), Error);
  EXPECT_THROW((void)(relu(a) + host), Error);
  sync();
  EXPECT_EQ(metrics::timer("ExecuteTime").count, 0) << "nothing was recorded";
  Tensor ok = relu(a * b) + c;  // the next expression still works
  EXPECT_EQ(ok.shape(), (Shape{64, 33}));
}

TEST_F(Fragment, StructuralHashIsTheSameInTwoTranslationUnits) {
  FragmentProbe here = probe_fragment_here();
  FragmentProbe there = probe_fragment_in_other_unit();
  EXPECT_EQ(here.structural_hash, there.structural_hash);
  EXPECT_EQ(here.node_hash, there.node_hash);
  EXPECT_NE(here.structural_hash, 0u);
  static_assert(expr::structural_hash<expr::skeleton_t<decltype(relu(a * b + c))>> !=
                    expr::structural_hash<expr::skeleton_t<decltype(relu(a * b - c))>>,
                "different expressions hash apart");
}

TEST_F(Fragment, StructuralHashIsTheSameInTwoProcesses) {
  FragmentProbe here = probe_fragment_here();
  std::FILE* p = popen(LAZYTENSOR_FRAGMENT_PROBE, "r");
  ASSERT_NE(p, nullptr);
  unsigned long long structural = 0, node = 0;
  ASSERT_EQ(std::fscanf(p, "%llx %llx", &structural, &node), 2);
  EXPECT_EQ(pclose(p), 0);
  EXPECT_EQ(structural, here.structural_hash);
  EXPECT_EQ(node, here.node_hash);
}

TEST_F(Fragment, ANodeHashFollowsItsScalarsClassWhateverWasTracedBefore) {
  // Each thread remembers the digest of the attributes it last hashed for an op; values that
  // change bits but not class (0.5 and 2, 0 and -0) and values that change class, traced in
  // turns with other expressions, must all hash by class alone.
  const std::vector<float> values = {0.5f, 0.f, 1.f, 2.f, -0.f, 0.5f, 1.f, 3.f, 0.f, 2.f, 1.f};
  auto scalar_class = [](float v) { return v == 0 ? 0 : v == 1 ? 1 : 2; };
  std::vector<hash_t> scaled, shifted;
  for (float v : values) {
    Tensor y = a * v;
    Tensor z = relu(a * b + v) - v;  // another op between two of the same op, with two scalars
    Tensor w = c * v;                // the same op on another shape
    scaled.push_back(y.impl().node->hash);
    shifted.push_back(z.impl().node->hash);
    EXPECT_NE(w.impl().node->hash, y.impl().node->hash);
  }
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < values.size(); ++j) {
      const bool same_class = scalar_class(values[i]) == scalar_class(values[j]);
      EXPECT_EQ(scaled[i] == scaled[j], same_class) << values[i] << " and " << values[j];
      EXPECT_EQ(shifted[i] == shifted[j], same_class) << values[i] << " and " << values[j];
    }
  // And the values themselves are the ones computed.
  Tensor y = a * 3.0f;
  std::vector<float> got = y.to_vector<float>(), in = a.to_vector<float>();
  for (std::size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], in[k] * 3.0f);
}

TEST_F(Fragment, AttributesShareATokenExactlyWhenTheirIntsAndFloatBitsAreTheSame) {
  // A cached plan and a bound loop take equal tokens for equal attributes: a token must never
  // be shared by attributes that differ, whatever was traced in between.
  const std::vector<float> values = {0.5f, 0.5f, 2.f, 0.f, -0.f, 0.5f, 2.f};
  std::vector<NodePtr> nodes;
  for (float v : values) {
    Tensor y = a * v;
    Tensor other = relu(b + v);  // another op in between, with the same scalar
    nodes.push_back(y.impl().node);
    EXPECT_NE(other.impl().node->attrs_token, y.impl().node->attrs_token);
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_NE(nodes[i]->attrs_token, 0u);
    for (std::size_t j = 0; j < nodes.size(); ++j) {
      const bool same_bits = std::bit_cast<std::uint32_t>(values[i]) == std::bit_cast<std::uint32_t>(values[j]);
      if (nodes[i]->attrs_token == nodes[j]->attrs_token) EXPECT_TRUE(same_bits) << values[i] << " and " << values[j];
      EXPECT_EQ(KeptAttrs(*nodes[i]).same_as(*nodes[j]), same_bits) << values[i] << " and " << values[j];
    }
  }
  // Traced again and again with the same value, an op keeps its token.
  EXPECT_EQ(nodes[0]->attrs_token, nodes[1]->attrs_token);
  // Attributes of one token whose data ints differ (a scalar's integer form) are not the same.
  KeptAttrs kept(*nodes[0]);
  ASSERT_FALSE(kept.attrs.values.empty());
  kept.attrs.values[0] += 1;
  EXPECT_FALSE(kept.same_as(*nodes[0]));
}

}  // namespace
}  // namespace lt

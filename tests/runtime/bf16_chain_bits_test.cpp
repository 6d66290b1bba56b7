// A chain of bf16 ops in one fused group, each op run in one pass, against a plain loop that
// rounds every op's f32 result once (nearest even, a NaN quietened) and against the reference
// executor's bits: every bf16 pattern meets ties, subnormals, values rounding to infinity,
// infinities and NaNs, in the chain's intermediates as well as its operands.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include <lazytensor/lazytensor.hpp>

#include "plan_oracle.hpp"

namespace lt {
namespace {

std::uint16_t round_bits(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
float widen(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }
float maximum_of(float x, float y) { return std::isnan(x) ? x : std::isnan(y) ? y : x < y ? y : x; }

TEST(Bf16ChainBits, EveryOpOfAChainRoundsOnceAsItsOwnOp) {
  // a: every bf16 pattern (sNaNs arrive quietened by the cast to bf16); b, c: a cycle that
  // makes ties of the products (0x3f81 squared ends in 0x8000 below bf16), subnormal
  // products and sums, overflow to infinity, NaNs of inf - inf and cancellations. A length
  // with a tail. No op meets two NaNs: which one it gives is the compiler's choice in C++
  // (it may swap an addition's operands), in the reference executor's kernels too.
  const std::uint16_t cycle_b[] = {0x3f81, 0x3f80, 0xbf81, 0x0001, 0x8080, 0x7f7f, 0x7f80, 0xff80, 0x3f82,
                                   0x0000, 0x8000, 0x4049, 0x3c01, 0x00ff, 0x4b7f, 0x3400, 0x7f00, 0x0080, 0x3f83};
  const std::uint16_t cycle_c[] = {0x3b80, 0xbf80, 0x0000, 0x8001, 0x7f7f, 0xff7f, 0x3f81, 0x0081, 0xff80, 0x4000, 0x3380};
  const std::size_t n = 0x10000 + 21;
  std::vector<float> va(n), vb(n), vc(n);
  for (std::size_t i = 0; i < n; ++i) {
    va[i] = widen(static_cast<std::uint16_t>(i));
    vb[i] = widen(cycle_b[i % std::size(cycle_b)]);
    vc[i] = widen(cycle_c[i % std::size(cycle_c)]);
  }
  const auto len = static_cast<std::int64_t>(n);
  Tensor a = from_vector<float>(va, {len}, device()).to(bf16), b = from_vector<float>(vb, {len}, device()).to(bf16),
         c = from_vector<float>(vc, {len}, device()).to(bf16);
  sync();
  const std::vector<float> wa = a.to_vector<float>(), wb = b.to_vector<float>(), wc = c.to_vector<float>();
  const std::int64_t before = metrics::counter("RowLoopBf16Ops");
  // Seven ops, one group: rounding ops, ops that select an operand (maximum, neg, relu), and
  // scalars that are bf16 values and that are not (0.1).
  Tensor t1 = a * b, t2 = t1 + c, t3 = maximum(t2, 0.0), t4 = t3 * 0.1, t5 = -t4, t6 = relu(t5 + c), out = t6 - b;
  oracle::expect_plan_matches_reference({out}, "a bf16 chain");
  EXPECT_EQ(metrics::counter("RowLoopBf16Ops") - before, 8) << "each op of the chain ran in one pass";
  const std::vector<float> got = out.to_vector<float>();
  // The same ops recorded as casts to f32, the op and a cast to bf16, each run alone (a
  // barrier after each): every bit the same, NaNs' too.
  std::vector<Tensor> alone;
  auto step = [&](Tensor t) {
    sync();
    alone.push_back(t);
    return t;
  };
  auto r16 = [&](Tensor t) { return step(step(t).to(bf16)); };
  auto f = [&](Tensor t) { return step(t.to(f32)); };
  Tensor u1 = r16(f(a) * f(b)), u2 = r16(f(u1) + f(c)), u3 = r16(maximum(f(u2), 0.0)), u4 = r16(f(u3) * 0.1), u5 = r16(-f(u4));
  Tensor u6 = r16(relu(f(r16(f(u5) + f(c))))), u7 = r16(f(u6) - f(b));
  const std::vector<float> one_by_one = u7.to_vector<float>();
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(one_by_one[i]))
        << i << std::hex << " a " << std::bit_cast<std::uint32_t>(wa[i]) << " b " << std::bit_cast<std::uint32_t>(wb[i])
        << " c " << std::bit_cast<std::uint32_t>(wc[i]);
  auto r = [](float x) { return widen(round_bits(x)); };
  std::size_t nans = 0, subnormals = 0, infinities = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float p = r(wa[i] * wb[i]), s = r(p + wc[i]), m = r(maximum_of(s, 0.0f)), q = r(m * 0.1f), ng = r(-q);
    const float u = r(ng + wc[i]), rl = std::isnan(u) ? u : (u < 0.0f ? 0.0f : u);
    const float want = r(r(rl) - wb[i]);
    const std::uint16_t bits = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(got[i]) >> 16);
    if (std::isnan(want)) {
      ++nans;  // payloads: the reference executor's, checked above
      ASSERT_EQ(bits & 0x7fc0u, 0x7fc0u) << i;
    } else {
      subnormals += std::fpclassify(p) == FP_SUBNORMAL || std::fpclassify(s) == FP_SUBNORMAL;
      infinities += std::isinf(p) || std::isinf(s);
      ASSERT_EQ(bits, round_bits(want)) << i << " a " << std::hex << i % 0x10000;
    }
  }
  EXPECT_GT(nans, 0u);
  EXPECT_GT(subnormals, 0u);
  EXPECT_GT(infinities, 0u);
}

}  // namespace
}  // namespace lt

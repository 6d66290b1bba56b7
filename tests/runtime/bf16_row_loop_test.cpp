// bf16 in the row loop: a fused group that reads and writes bf16 (each op in f32 between
// casts) runs in the row loop through the cast's bound form, with the reference executor's
// bits, and the bound conversion rounds every f32 as lt::bfloat16 does.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/ops/kernels/convert.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the runtime's internals, tested here

#include "plan_oracle.hpp"

namespace lt {
namespace {

using oracle::expect_plan_matches_reference;

/// f32 patterns that round differently: every exponent and sign, mantissas at the ties (odd and
/// even upper halves), just past them, their ends, NaNs quiet and signalling, infinities and
/// subnormals; each narrowed by the bound map as one run, so that its packets meet them all.
TEST(Bf16RowLoop, BoundConversionRoundsAsBfloat16) {
  std::vector<std::uint32_t> bits;
  for (std::uint32_t high = 0; high < 0x10000u; high += 7)
    for (std::uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, 0x4000u, 0xc000u})
      bits.push_back(high << 16 | low);
  for (std::uint32_t special : {0x7f800000u, 0xff800000u, 0x7f800001u, 0x7fc00000u, 0xffbfffffu, 0x7f7fffffu, 0x00000001u,
                                0x807fffffu, 0x7f7f8000u, 0x3f808000u, 0x3f818000u})
    bits.push_back(special);
  std::vector<float> in(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) in[i] = std::bit_cast<float>(bits[i]);
  std::vector<bfloat16> narrowed(in.size());
  std::vector<float> widened(in.size());
  BoundKernel narrow, widen;
  const Meta f32_meta{Shape{1, 1}, f32}, bf16_meta{Shape{1, 1}, bf16};
  ASSERT_TRUE(kernels::convert_bind(std::span(&f32_meta, 1), bf16_meta, Attrs{}, narrow));
  ASSERT_TRUE(kernels::convert_bind(std::span(&bf16_meta, 1), f32_meta, Attrs{}, widen));
  EXPECT_EQ(narrow.input, f32);
  EXPECT_EQ(widen.input, bf16);
  for (bool stream : {false, true}) {
    const void* src[1] = {in.data()};
    narrow.map(narrow.state, src, narrowed.data(), static_cast<std::int64_t>(in.size()), stream);
    kernels::pk::stream_fence();
    const void* back[1] = {narrowed.data()};
    widen.map(widen.state, back, widened.data(), static_cast<std::int64_t>(in.size()), false);
    for (std::size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(narrowed[i].bits, bfloat16::round(in[i])) << std::hex << bits[i] << " streamed " << stream;
      ASSERT_EQ(std::bit_cast<std::uint32_t>(widened[i]), static_cast<std::uint32_t>(narrowed[i].bits) << 16) << std::hex << bits[i];
    }
  }
}

/// The difference of the row loop and tile counters over `run`.
template <class F>
std::pair<std::int64_t, std::int64_t> loop_counts_over(F&& run) {
  const std::int64_t rows = metrics::counter("RowLoopGroups"), views = metrics::counter("TileViewGroups");
  run();
  return {metrics::counter("RowLoopGroups") - rows, metrics::counter("TileViewGroups") - views};
}

/// W1 in bf16: inputs and result bf16, each op rounded once. It runs in the row loop with the
/// reference executor's bits, at a length that leaves a tail in every tile size; and with a
/// result streamed past the caches (2^24 values), against a plain loop of bfloat16 ops.
TEST(Bf16RowLoop, W1InBf16RunsInTheRowLoop) {
  auto w1 = [](const Tensor& a, const Tensor& b, const Tensor& c) {
    Tensor ab = a * b, s = ab + c, m = maximum(s, 0.0), h = m * 0.5;
    return h - b;
  };
  for (std::int64_t n : {std::int64_t{100003}, std::int64_t{1} << 24}) {
    SCOPED_TRACE(n);
    const bool large = n > 200000;
    Tensor a = randn({n}, device(), bf16), b = randn({n}, device(), bf16), c = randn({n}, device(), bf16);
    sync();
    Tensor out;
    auto [rows, views] = loop_counts_over([&] {
      out = w1(a, b, c);
      ASSERT_EQ(out.dtype(), bf16);
      // The reference executor keeps every intermediate: the large graph is checked by loop.
      if (!large) expect_plan_matches_reference({out}, "W1 in bf16");
      else sync();
      wait_device_ops();
    });
    EXPECT_GE(rows, 1);
    EXPECT_EQ(views, 0) << "a bf16 group ran on the tile path";
    std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>(), vc = c.to_vector<float>(), got = out.to_vector<float>();
    auto round = [](float x) { return static_cast<float>(bfloat16(x)); };
    for (std::size_t i = 0; i < va.size(); ++i) {
      const float ab = round(va[i] * vb[i]), s = round(ab + vc[i]), m = round(std::max(s, 0.0f)), h = round(m * 0.5f);
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(round(h - vb[i]))) << i;
    }
  }
}

/// bf16 around reductions (softmax, a row mean), with broadcast rows, a one-element bf16
/// operand, and conversions to and from other dtypes in the group.
TEST(Bf16RowLoop, RowGroupsAndConversionsInBf16RunInTheRowLoop) {
  Tensor x = randn({24, 301}, device(), bf16), bias = randn({301}, device(), bf16), one = randn({}, device(), bf16);
  Tensor i = randint(0, 5, {24, 301}, device(), i32);
  sync();
  auto [rows, views] = loop_counts_over([&] {
    Tensor soft = softmax(x + bias, 1);
    Tensor centred = (x - mean(x, Dims{1}, true)) * one;
    Tensor mixed = (i.to(bf16) * x).to(f32) + x.to(f64).to(f32);
    Tensor back = (x > 0.0f).to(bf16) + i.to(bf16);
    expect_plan_matches_reference({soft, centred, mixed, back}, "bf16 row groups");
  });
  EXPECT_GE(rows, 2);
  EXPECT_EQ(views, 0) << "a bf16 group ran on the tile path";
}

}  // namespace
}  // namespace lt

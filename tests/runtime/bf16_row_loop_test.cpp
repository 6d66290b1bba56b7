// bf16 in the row loop: a fused group that reads and writes bf16 (each op in f32 between
// casts) runs in the row loop through the cast's bound form, with the reference executor's
// bits, and the bound conversion rounds every f32 as lt::bfloat16 does.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/ops/kernels/convert.hpp>
#include <lazytensor/ops/registry.hpp>
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

/// bf16 rounding written apart from lt::bfloat16: nearest even on the bits, a NaN kept quiet.
std::uint16_t round_bits(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
float widen(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

/// The bf16 forms of bound f32 ops (an op on bf16 values in one pass: operands widened, the
/// result rounded) against a plain loop: every bf16 value against a cycle of others that
/// makes ties, subnormals, overflow, infinities and NaNs, with either operand one f32 value
/// (not a bf16 one: 0.1f is not rounded), streamed or not. (NaN payloads: the graph tests
/// compare them with the reference executor's.)
TEST(Bf16RowLoop, BoundBf16FormsRoundEachResultOnce) {
  std::vector<std::uint16_t> a(0x10000), b(a.size());
  const std::uint16_t cycle[] = {0x3f80, 0x3f81, 0xbf7f, 0x0001, 0x8080, 0x7f7f, 0x7f80, 0xff80, 0x7fc1, 0xffa0,
                                 0x0000, 0x8000, 0x4049, 0x3c01, 0x00ff, 0x4b7f, 0x3400, 0x7f00, 0x0080};
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<std::uint16_t>(i);
    b[i] = cycle[i % std::size(cycle)];
  }
  auto maximum_of = [](float x, float y) { return std::isnan(x) ? x : std::isnan(y) ? y : x < y ? y : x; };
  struct Case {
    OpId id;
    std::function<float(float, float)> fn;  // the op in f32 (the second operand unused by unary ops)
    int arity;
  };
  const std::vector<Case> cases = {{OpId::add, std::plus<float>(), 2},
                                   {OpId::sub, std::minus<float>(), 2},
                                   {OpId::mul, std::multiplies<float>(), 2},
                                   {OpId::maximum, maximum_of, 2},
                                   {OpId::neg, [](float x, float) { return -x; }, 1}};
  const Meta meta{Shape{1, 1}, f32};
  const std::vector<Meta> metas(2, meta);
  const float scalar = 0.1f;
  std::vector<std::uint16_t> got(a.size());
  for (const Case& c : cases) {
    const OpDesc* op = find_op(c.id);
    ASSERT_NE(op, nullptr);
    BoundKernel k;
    ASSERT_TRUE(op->bind(std::span(metas.data(), static_cast<std::size_t>(c.arity)), meta, Attrs{}, k)) << op->name;
    ASSERT_NE(k.bf16_form, nullptr) << op->name;
    EXPECT_EQ(k.bf16_form(static_cast<unsigned>((1 << c.arity) - 1)), nullptr) << "every operand one value";
    for (unsigned uniform = 0; uniform < (1u << c.arity) - 1; ++uniform)
      for (bool stream : {false, true}) {
        SCOPED_TRACE(std::string(op->name) + " uniform " + std::to_string(uniform) + " stream " + std::to_string(stream));
        const BoundKernel::Map map = k.bf16_form(uniform);
        ASSERT_NE(map, nullptr);
        const void* src[2] = {uniform & 1u ? static_cast<const void*>(&scalar) : a.data(),
                              uniform & 2u ? static_cast<const void*>(&scalar) : b.data()};
        // Odd starts and lengths: packets meet the ends of runs.
        for (std::int64_t first : {std::int64_t{0}, std::int64_t{3}}) {
          std::fill(got.begin(), got.end(), std::uint16_t{0xdead});
          const void* at[2] = {uniform & 1u ? src[0] : a.data() + first, uniform & 2u ? src[1] : b.data() + first};
          const auto n = static_cast<std::int64_t>(a.size()) - first - 5;
          map(k.state, at, got.data() + first, n, stream);
          kernels::pk::stream_fence();
          for (std::int64_t i = first; i < first + n; ++i) {
            const float x = uniform & 1u ? scalar : widen(a[static_cast<std::size_t>(i)]);
            const float y = uniform & 2u ? scalar : widen(b[static_cast<std::size_t>(i)]);
            const float want = c.fn(x, y);
            const std::uint16_t bits = got[static_cast<std::size_t>(i)];
            // Which NaN an op gives for NaN operands is the compiler's choice in C++ (it may
            // swap an addition's operands): a quiet NaN, then; every other result exactly.
            if (std::isnan(want)) ASSERT_TRUE((bits & 0x7fc0u) == 0x7fc0u) << std::hex << bits;
            else ASSERT_EQ(bits, round_bits(want)) << std::hex << a[static_cast<std::size_t>(i)] << " " << b[static_cast<std::size_t>(i)];
          }
          EXPECT_EQ(got[static_cast<std::size_t>(first + n)], 0xdead) << "written past the run";
        }
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

/// bf16 ops run in one pass where the row loop can (their operands bf16 tensors or scalars,
/// their f32 result only rounded), beside those it cannot: an f32 operand, a one-element bf16
/// operand, an intermediate that is also a result, one read twice, a broadcast operand, values
/// with NaNs, infinities and subnormals. The reference executor's bits, and the W1 chain's
/// ops counted as run in one pass.
TEST(Bf16RowLoop, Bf16OpsRunInOnePassWithTheReferenceBits) {
  const std::int64_t rows = 517, cols = 37;
  std::vector<float> special(static_cast<std::size_t>(rows * cols));
  const float values[] = {1.0f, -0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                          1e-39f, -3e-41f, 3.0e38f, 0.00390625f, -1.0078125f};
  for (std::size_t i = 0; i < special.size(); ++i) special[i] = i % 3 == 0 ? values[i / 3 % std::size(values)] : static_cast<float>(i % 101) * 0.37f - 17.0f;
  Tensor x = from_vector<float>(special, {rows, cols}, device()).to(bf16);
  Tensor y = randn({rows, cols}, device(), bf16), row = randn({cols}, device(), bf16), one = randn({}, device(), bf16);
  Tensor f = randn({rows, cols}, device(), f32);
  sync();
  const std::int64_t fused_before = metrics::counter("RowLoopBf16Ops");
  auto [loops, views] = loop_counts_over([&] {
    Tensor t1 = x * y, t2 = t1 * row, t3 = 2.5 * t2, t4 = t3 - one, t5 = -t4, t6 = maximum(t5, x);
    Tensor t7 = t6 / 3.0, t8 = t7 + f, t9 = t6 * t7 - x;
    expect_plan_matches_reference({t6, t8, t9}, "bf16 ops in one pass");
  });
  EXPECT_GE(loops, 1);
  EXPECT_EQ(views, 0) << "a bf16 group ran on the tile path";
  EXPECT_GE(metrics::counter("RowLoopBf16Ops") - fused_before, 4) << "bf16 ops ran between casts";

  // W1 at 2^24 - 5 values: 5 ops in one pass each, the same bits at 1 and 2 threads.
  const std::int64_t n = (std::int64_t{1} << 24) - 5;
  Tensor a = randn({n}, device(), bf16), b = randn({n}, device(), bf16), c = randn({n}, device(), bf16);
  sync();
  std::vector<std::vector<float>> outs;
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    tbb::task_arena arena(threads);
    arena.execute([&] {
      const std::int64_t before = metrics::counter("RowLoopBf16Ops");
      Tensor ab = a * b, s = ab + c, m = maximum(s, 0.0), h = m * 0.5, out = h - b;
      outs.push_back(out.to_vector<float>());
      EXPECT_EQ(metrics::counter("RowLoopBf16Ops") - before, 5);
    });
  }
  ASSERT_EQ(outs[0].size(), outs[1].size());
  EXPECT_EQ(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(float)), 0) << "bits differ by thread count";
}

/// A plan run again with other scalars (the same plan, its loop bound again): the bf16 ops in
/// one pass take the new values, against a plain loop of bfloat16 ops.
TEST(Bf16RowLoop, Bf16OpsInOnePassTakeNewScalarsWhenBoundAgain) {
  const std::int64_t n = 4099;
  Tensor x = randn({n}, device(), bf16), y = randn({n}, device(), bf16);
  sync();
  const std::vector<float> vx = x.to_vector<float>(), vy = y.to_vector<float>();
  auto round = [](float v) { return static_cast<float>(bfloat16(v)); };
  for (const auto& [low, scale] : {std::pair{0.0, 0.5}, std::pair{-0.3, 1.7}, std::pair{0.1, -2.25}}) {
    SCOPED_TRACE(scale);
    Tensor out = maximum(x * y, low) * scale + y;
    const std::vector<float> got = out.to_vector<float>();
    for (std::size_t i = 0; i < vx.size(); ++i) {
      const float want = round(round(round(std::max(round(vx[i] * vy[i]), static_cast<float>(low))) * static_cast<float>(scale)) + vy[i]);
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want)) << i;
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

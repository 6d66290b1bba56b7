// Reference cases of the creation ops, and the contract of the seeded random ops. The random
// references come from a Philox-4x32-10 written here from its published definition and checked
// against the Random123 known-answer vectors, so the library's values are compared exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <set>
#include <string>

#include <oneapi/tbb/global_control.h>

#include "op_harness.hpp"

namespace lt::test {
namespace {

// ---- an independent Philox-4x32-10 -----------------------------------------------------------

using Words = std::array<std::uint32_t, 4>;

void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p & 0xFFFFFFFFu);
}

/// Salmon et al. 2011, as in Random123's philox.h: the key is bumped before every round but
/// the first.
Words reference_philox(Words ctr, std::uint32_t k0, std::uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    std::uint32_t hi0, lo0, hi1, lo1;
    mulhilo(0xD2511F53u, ctr[0], hi0, lo0);
    mulhilo(0xCD9E8D57u, ctr[2], hi1, lo1);
    ctr = Words{hi1 ^ ctr[1] ^ k0, lo1, hi0 ^ ctr[3] ^ k1, lo0};
  }
  return ctr;
}

/// The documented stream: block b of seed s is Philox(ctr = {b lo, b hi, 0, 0}, key = {s lo, s hi}).
Words reference_block(std::uint64_t seed, std::uint64_t block) {
  return reference_philox(Words{static_cast<std::uint32_t>(block & 0xFFFFFFFFu), static_cast<std::uint32_t>(block >> 32), 0, 0},
                          static_cast<std::uint32_t>(seed & 0xFFFFFFFFu), static_cast<std::uint32_t>(seed >> 32));
}

/// Words k and k + 1 as one 64-bit number, low word first.
std::uint64_t pair_bits(const Words& w, int k) { return w[k] | (static_cast<std::uint64_t>(w[k + 1]) << 32); }

double unit53(std::uint64_t bits) { return std::ldexp(static_cast<double>(bits >> 11), -53); }

// Element `slot` of a block, per op. f32 uniforms take a word each (four per block); f64
// uniforms and integers a word pair (two per block); normals are a Box-Muller pair.
double reference_uniform(DType t, const Words& w, int slot) {
  return t == DType::f32 ? std::ldexp(static_cast<double>(w[slot] >> 8), -24) : unit53(pair_bits(w, 2 * slot));
}

double reference_normal(const Words& w, int slot) {
  double radius = std::sqrt(-2.0 * std::log(1.0 - unit53(pair_bits(w, 0))));
  double theta = 2.0 * std::numbers::pi * unit53(pair_bits(w, 2));
  return slot == 0 ? radius * std::cos(theta) : radius * std::sin(theta);
}

std::int64_t reference_randint(std::int64_t low, std::int64_t high, const Words& w, int slot) {
  auto width = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + pair_bits(w, 2 * slot) % width);
}

/// A reference of `shape` whose element i is f(block offset + i / per_block, slot i % per_block).
template <class F>
Ref random_reference(std::vector<std::int64_t> shape, DType t, std::uint64_t seed, std::uint64_t offset, int per_block, F f) {
  Ref r{std::move(shape), t, {}};
  for (std::int64_t i = 0; i < r.numel(); ++i) {
    Words w = reference_block(seed, offset + static_cast<std::uint64_t>(i / per_block));
    r.v.push_back(round_to(t, f(w, static_cast<int>(i % per_block))));
  }
  return r;
}

// ---- reference cases -------------------------------------------------------------------------

/// Creation ops take no tensors: each case gets one small input only to say which device to
/// create on.
const Ref device_anchor = values_ref({1}, DType::f32, {0});
Device on(const std::vector<Tensor>& in) { return in[0].device(); }

Ref constant(std::vector<std::int64_t> shape, DType t, double v) {
  Ref r{std::move(shape), t, {}};
  r.v.assign(static_cast<std::size_t>(r.numel()), round_to(t, v));
  return r;
}

OpCase exact(std::string label, std::function<Tensor(const std::vector<Tensor>&)> run, Ref expected) {
  return {std::move(label), {device_anchor}, std::move(run), std::move(expected), 0, 0};
}

}  // namespace

LT_OP_TEST(full) {
  Ref x = random_ref({2, 3}, DType::i32, 31, -9, 9);
  return {
      exact("float value gives f32", [](auto& in) { return full({2, 3}, 1.5, on(in)); }, constant({2, 3}, DType::f32, 1.5)),
      exact("integer value gives i64", [](auto& in) { return full({4}, -7, on(in)); }, constant({4}, DType::i64, -7)),
      exact("bool value gives bool", [](auto& in) { return full({2, 2}, true, on(in)); }, constant({2, 2}, DType::boolean, 1)),
      exact("float value into i32 truncates", [](auto& in) { return full({3}, -2.75, on(in), DType::i32); },
            constant({3}, DType::i32, -2)),
      exact("float value into bool", [](auto& in) { return full({3}, 0.25, on(in), DType::boolean); },
            constant({3}, DType::boolean, 1)),
      exact("zeros f64", [](auto& in) { return zeros({3, 1, 2}, on(in), DType::f64); }, constant({3, 1, 2}, DType::f64, 0)),
      exact("ones default f32", [](auto& in) { return ones({5}, on(in)); }, constant({5}, DType::f32, 1)),
      exact("rank 0", [](auto& in) { return full({}, 2.5, on(in)); }, constant({}, DType::f32, 2.5)),
      exact("size 0", [](auto& in) { return zeros({0, 3}, on(in)); }, constant({0, 3}, DType::f32, 0)),
      exact("large parallel fill", [](auto& in) { return full({300, 400}, 3, on(in), DType::f32); },
            constant({300, 400}, DType::f32, 3)),
      {"full_like keeps shape, dtype and device", {x}, [](auto& in) { return full_like(in[0], 4.9); },
       constant({2, 3}, DType::i32, 4), 0, 0},
      {"zeros_like", {x}, [](auto& in) { return zeros_like(in[0]); }, constant({2, 3}, DType::i32, 0), 0, 0},
      {"ones_like", {x}, [](auto& in) { return ones_like(in[0]); }, constant({2, 3}, DType::i32, 1), 0, 0},
  };
}

namespace {
/// torch.arange by a plain loop: ceil((end - start) / step) values start + i * step.
Ref arange_ref(double start, double end, double step, DType t) {
  auto n = static_cast<std::int64_t>(std::ceil((end - start) / step));
  Ref r{{n}, t, {}};
  for (std::int64_t i = 0; i < n; ++i) r.v.push_back(round_to(t, start + static_cast<double>(i) * step));
  return r;
}
}  // namespace

LT_OP_TEST(arange) {
  return {
      exact("end only gives i64", [](auto& in) { return arange(5, on(in)); }, arange_ref(0, 5, 1, DType::i64)),
      exact("integer step, end not reached", [](auto& in) { return arange(2, 11, 3, on(in)); }, arange_ref(2, 11, 3, DType::i64)),
      exact("negative step", [](auto& in) { return arange(10, 0, -3, on(in)); }, arange_ref(10, 0, -3, DType::i64)),
      exact("empty range", [](auto& in) { return arange(3, 3, 1, on(in)); }, arange_ref(3, 3, 1, DType::i64)),
      {"float step gives f32", {device_anchor}, [](auto& in) { return arange(0.0, 1.0, 0.1, on(in)); },
       arange_ref(0, 1, 0.1, DType::f32)},
      {"float start and end, integer step", {device_anchor}, [](auto& in) { return arange(-1.5, 2.0, 1, on(in)); },
       arange_ref(-1.5, 2.0, 1, DType::f32)},
      {"float, negative step", {device_anchor}, [](auto& in) { return arange(2.0, -1.0, -0.25, on(in)); },
       arange_ref(2, -1, -0.25, DType::f32)},
      exact("integers as f64", [](auto& in) { return arange(-4, 4, 2, on(in), DType::f64); }, arange_ref(-4, 4, 2, DType::f64)),
      exact("long i64 range", [](auto& in) { return arange(-50000, 150000, 1, on(in)); },
            arange_ref(-50000, 150000, 1, DType::i64)),
  };
}

namespace {
/// torch.linspace by a plain loop: start + i * (end - start) / (steps - 1).
Ref linspace_ref(double start, double end, std::int64_t steps, DType t) {
  Ref r{{steps}, t, {}};
  for (std::int64_t i = 0; i < steps; ++i)
    r.v.push_back(round_to(t, steps == 1 ? start : start + static_cast<double>(i) * (end - start) / static_cast<double>(steps - 1)));
  return r;
}
}  // namespace

LT_OP_TEST(linspace) {
  auto run = [](double start, double end, std::int64_t steps, DType t = DType::f32) {
    return [=](const std::vector<Tensor>& in) { return linspace(start, end, steps, on(in), t); };
  };
  return {
      {"unit interval", {device_anchor}, run(0, 1, 5), linspace_ref(0, 1, 5, DType::f32)},
      {"odd count", {device_anchor}, run(-3, 7, 11), linspace_ref(-3, 7, 11, DType::f32)},
      {"decreasing", {device_anchor}, run(2, -2, 7), linspace_ref(2, -2, 7, DType::f32)},
      {"both ends exact", {device_anchor}, run(0.1, 0.7, 1000), linspace_ref(0.1, 0.7, 1000, DType::f32)},
      {"f64", {device_anchor}, run(-1, 3, 101, DType::f64), linspace_ref(-1, 3, 101, DType::f64), 1e-13, 1e-14},
      exact("i64 truncates", run(0, 10, 4, DType::i64), linspace_ref(0, 10, 4, DType::i64)),
      exact("one step gives start", run(1, 5, 1), linspace_ref(1, 5, 1, DType::f32)),
      exact("zero steps", run(0, 1, 0), linspace_ref(0, 1, 0, DType::f32)),
  };
}

namespace {
Ref eye_ref(std::int64_t n, std::int64_t m, DType t) {
  Ref r{{n, m}, t, {}};
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) r.v.push_back(i == j ? 1 : 0);
  return r;
}
}  // namespace

LT_OP_TEST(eye) {
  return {
      exact("square", [](auto& in) { return eye(3, on(in)); }, eye_ref(3, 3, DType::f32)),
      exact("wide", [](auto& in) { return eye(2, 4, on(in)); }, eye_ref(2, 4, DType::f32)),
      exact("tall i64", [](auto& in) { return eye(4, 2, on(in), DType::i64); }, eye_ref(4, 2, DType::i64)),
      exact("bool", [](auto& in) { return eye(3, on(in), DType::boolean); }, eye_ref(3, 3, DType::boolean)),
      exact("m = -1 is square", [](auto& in) { return eye(2, -1, on(in), DType::f64); }, eye_ref(2, 2, DType::f64)),
      exact("empty", [](auto& in) { return eye(0, on(in)); }, eye_ref(0, 0, DType::f32)),
      exact("large", [](auto& in) { return eye(300, 200, on(in)); }, eye_ref(300, 200, DType::f32)),
  };
}

namespace {
constexpr std::uint64_t high_seed = 0xDEADBEEFCAFEBABEull;
// Close below 2^32, so a call's blocks cross into the high counter word.
constexpr std::uint64_t word_crossing_offset = 0xFFFFFFF0ull;

/// Calls `make` with the default generator at (seed, offset).
auto from_state(std::uint64_t seed, std::uint64_t offset, std::function<Tensor(Device)> make) {
  return [=](const std::vector<Tensor>& in) {
    default_generator().set_state({seed, offset});
    return make(on(in));
  };
}
}  // namespace

LT_OP_TEST(rand) {
  auto uniform = [](DType t) { return [t](const Words& w, int slot) { return reference_uniform(t, w, slot); }; };
  return {
      exact("seed 42, f32", from_state(42, 0, [](Device d) { return rand({37, 5}, d); }),
            random_reference({37, 5}, DType::f32, 42, 0, 4, uniform(DType::f32))),
      exact("f64 from an offset", from_state(7, 1000, [](Device d) { return rand({64}, d, DType::f64); }),
            random_reference({64}, DType::f64, 7, 1000, 2, uniform(DType::f64))),
      exact("64-bit seed, blocks crossing a counter word", from_state(high_seed, word_crossing_offset, [](Device d) { return rand({40}, d); }),
            random_reference({40}, DType::f32, high_seed, word_crossing_offset, 4, uniform(DType::f32))),
      exact("parallel size", from_state(3, 5, [](Device d) { return rand({200, 300}, d); }),
            random_reference({200, 300}, DType::f32, 3, 5, 4, uniform(DType::f32))),
      exact("size 0", from_state(1, 0, [](Device d) { return rand({0, 4}, d); }), Ref{{0, 4}, DType::f32, {}}),
  };
}

LT_OP_TEST(randn) {
  return {
      exact("seed 42, f32", from_state(42, 0, [](Device d) { return randn({37, 5}, d); }),
            random_reference({37, 5}, DType::f32, 42, 0, 2, reference_normal)),
      exact("f64 from an offset", from_state(9, 123, [](Device d) { return randn({3, 4, 5}, d, DType::f64); }),
            random_reference({3, 4, 5}, DType::f64, 9, 123, 2, reference_normal)),
      exact("64-bit seed, blocks crossing a counter word", from_state(high_seed, word_crossing_offset, [](Device d) { return randn({40}, d); }),
            random_reference({40}, DType::f32, high_seed, word_crossing_offset, 2, reference_normal)),
      exact("parallel size", from_state(4, 0, [](Device d) { return randn({100000}, d, DType::f64); }),
            random_reference({100000}, DType::f64, 4, 0, 2, reference_normal)),
  };
}

LT_OP_TEST(randint) {
  auto ints = [](std::int64_t low, std::int64_t high) {
    return [=](const Words& w, int slot) { return static_cast<double>(reference_randint(low, high, w, slot)); };
  };
  constexpr std::int64_t wide = std::int64_t{1} << 62;
  return {
      exact("[-5, 17) i64", from_state(3, 0, [](Device d) { return randint(-5, 17, {10, 10}, d); }),
            random_reference({10, 10}, DType::i64, 3, 0, 2, ints(-5, 17))),
      exact("high only", from_state(8, 77, [](Device d) { return randint(6, {50}, d); }),
            random_reference({50}, DType::i64, 8, 77, 2, ints(0, 6))),
      exact("i32", from_state(5, 0, [](Device d) { return randint(-1000, 1000, {30}, d, DType::i32); }),
            random_reference({30}, DType::i32, 5, 0, 2, ints(-1000, 1000))),
      exact("bool", from_state(6, 0, [](Device d) { return randint(0, 2, {30}, d, DType::boolean); }),
            random_reference({30}, DType::boolean, 6, 0, 2, ints(0, 2))),
      exact("f32", from_state(6, 0, [](Device d) { return randint(10, 20, {30}, d, DType::f32); }),
            random_reference({30}, DType::f32, 6, 0, 2, ints(10, 20))),
      exact("wide range", from_state(high_seed, word_crossing_offset, [=](Device d) { return randint(-wide, wide, {40}, d); }),
            random_reference({40}, DType::i64, high_seed, word_crossing_offset, 2, ints(-wide, wide))),
      exact("parallel size", from_state(2, 0, [](Device d) { return randint(0, 1000, {100000}, d); }),
            random_reference({100000}, DType::i64, 2, 0, 2, ints(0, 1000))),
  };
}

// ---- the random contract ---------------------------------------------------------------------

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Random, ReferencePhiloxMatchesPublishedVectors) {
  // Random123 tests/kat_vectors, philox4x32 with 10 rounds.
  struct Kat {
    Words ctr;
    std::uint32_t k0, k1;
    Words out;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, 0, 0, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff,
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0,
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    EXPECT_EQ(reference_philox(k.ctr, k.k0, k.k1), k.out);
    EXPECT_EQ(philox4x32_10(k.ctr, {k.k0, k.k1}), k.out);
  }
}

TEST(Random, SameSeedGivesSameValuesOnCpuAndLazy) {
  for (auto make : std::vector<std::function<Tensor(Device)>>{
           [](Device d) { return rand({257}, d); }, [](Device d) { return randn({257}, d, DType::f64); },
           [](Device d) { return randint(-3, 1000, {257}, d); }}) {
    manual_seed(1234);
    Tensor eager = make(cpu);
    manual_seed(1234);
    Tensor lazy_value = make(device());
    EXPECT_EQ(lazy_value.device(), device());
    EXPECT_EQ(eager.to_vector<double>(), lazy_value.to_vector<double>());
  }
}

TEST(Random, DifferentSeedsDiffer) {
  manual_seed(1);
  auto a = randn({100}).to_vector<float>();
  manual_seed(2);
  auto b = randn({100}).to_vector<float>();
  EXPECT_NE(a, b);
}

TEST(Random, SuccessiveCallsDifferAndAdvanceTheOffset) {
  manual_seed(11);
  auto a = rand({100}, device()).to_vector<float>();
  EXPECT_EQ(default_generator().state(), (RandomState{11, 25}));  // four f32 per block
  auto b = rand({100}, device()).to_vector<float>();
  EXPECT_EQ(default_generator().state(), (RandomState{11, 50}));
  EXPECT_NE(a, b);
  // The second call continues the stream: one call of 200 gives both.
  manual_seed(11);
  auto both = rand({200}).to_vector<float>();
  EXPECT_TRUE(std::equal(a.begin(), a.end(), both.begin()));
  EXPECT_TRUE(std::equal(b.begin(), b.end(), both.begin() + 100));
}

TEST(Random, CallsClaimWholeBlocks) {
  manual_seed(12);
  (void)rand({5});
  EXPECT_EQ(default_generator().state().offset, 2u);
  (void)rand({5}, cpu, DType::f64);
  EXPECT_EQ(default_generator().state().offset, 5u);
  (void)randn({3}, device());
  EXPECT_EQ(default_generator().state().offset, 7u);
  (void)randint(0, 9, {4});
  EXPECT_EQ(default_generator().state().offset, 9u);
  (void)rand({0});
  EXPECT_EQ(default_generator().state().offset, 9u);
}

TEST(Random, SavedStateReplays) {
  manual_seed(21);
  (void)rand({10});
  RandomState saved = default_generator().state();
  auto first = randn({50}).to_vector<float>();
  default_generator().set_state(saved);
  EXPECT_EQ(randn({50}).to_vector<float>(), first);
}

TEST(Random, RandnHasUnitMoments) {
  manual_seed(5);
  for (DType t : {DType::f32, DType::f64}) {
    auto v = randn({100000}, cpu, t).to_vector<double>();
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    double var = 0;
    for (double x : v) var += (x - mean) * (x - mean);
    var /= static_cast<double>(v.size() - 1);
    EXPECT_LT(std::abs(mean), 0.02) << name(t);
    EXPECT_LT(std::abs(var - 1), 0.03) << name(t);
    for (double x : v) ASSERT_TRUE(std::isfinite(x));
  }
}

TEST(Random, RandIsInTheUnitInterval) {
  manual_seed(6);
  for (DType t : {DType::f32, DType::f64}) {
    auto v = rand({100000}, device(), t).to_vector<double>();
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    EXPECT_GE(*lo, 0.0) << name(t);
    EXPECT_LT(*hi, 1.0) << name(t);
    EXPECT_LT(*lo, 1e-3) << name(t);
    EXPECT_GT(*hi, 1 - 1e-3) << name(t);
  }
}

/// bf16 draws are the f32 draws of the same seed truncated to bf16 (toward zero): rounded to
/// nearest, one draw in 512 would be 1.
TEST(Random, Bf16RandIsTheF32DrawTruncated) {
  for (Device d : {cpu, device()}) {
    manual_seed(6);
    const std::vector<float> wide = rand({1 << 16}, d, DType::f32).to_vector<float>();
    manual_seed(6);
    const std::vector<float> got = rand({1 << 16}, d, DType::bf16).to_vector<float>();
    ASSERT_EQ(got.size(), wide.size());
    float hi = 0;
    for (std::size_t k = 0; k < got.size(); ++k) {
      // Truncation by hand: the f32 pattern's low 16 bits cleared.
      const float want = std::bit_cast<float>(std::bit_cast<std::uint32_t>(wide[k]) & 0xffff0000u);
      ASSERT_EQ(got[k], want) << k << " on " << d.str();
      hi = std::max(hi, got[k]);
    }
    EXPECT_LT(hi, 1.0f) << d.str();
    EXPECT_EQ(hi, 255.0f / 256) << "the largest bf16 below 1 is drawn (" << d.str() << ")";
    double mean = 0;
    for (float v : got) mean += v;
    mean /= static_cast<double>(got.size());
    // Truncation lowers a draw by under half an ulp on average: at most 2^-9 near 1.
    EXPECT_NEAR(mean, 0.5, 0.01) << d.str();
  }
}

TEST(Random, RandintStaysInItsRangeAndCoversIt) {
  manual_seed(7);
  auto v = randint(-3, 4, {10000}).to_vector<std::int64_t>();
  std::set<std::int64_t> seen(v.begin(), v.end());
  EXPECT_EQ(seen, (std::set<std::int64_t>{-3, -2, -1, 0, 1, 2, 3}));
}

TEST(Random, ValuesDoNotDependOnTheThreadCount) {
  auto draw = [] {
    manual_seed(99);
    std::vector<double> all = rand({200000}).to_vector<double>();
    for (double x : randn({200000}, device()).to_vector<double>()) all.push_back(x);
    for (double x : randint(0, 1 << 20, {200000}).to_vector<double>()) all.push_back(x);
    return all;
  };
  std::vector<double> one, two;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = draw();
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    two = draw();
  }
  EXPECT_EQ(one, two);
}

TEST(Random, FailedCallLeavesTheGeneratorUntouched) {
  manual_seed(3);
  EXPECT_THROW(rand({4, -1}), Error);
  EXPECT_THROW(randint(5, 5, {4}), Error);
  EXPECT_EQ(default_generator().state(), (RandomState{3, 0}));
}

TEST(Dropout, KeepsAboutOneMinusPAndScales) {
  manual_seed(8);
  for (Device d : {cpu, device()}) {
    const double p = 0.3;
    auto v = dropout(ones({100000}, d), p).to_vector<float>();
    std::int64_t kept = 0;
    for (float x : v) {
      if (x == 0) continue;
      ++kept;
      ASSERT_NEAR(x, 1 / (1 - p), 1e-6);
    }
    EXPECT_NEAR(static_cast<double>(kept) / 100000.0, 1 - p, 0.01) << d;
  }
}

TEST(Dropout, KeepsF64AndScalesEachValue) {
  manual_seed(9);
  Tensor x = randn({1000}, cpu, DType::f64);
  Tensor y = dropout(x, 0.5);
  EXPECT_EQ(y.dtype(), DType::f64);
  auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
  for (std::size_t k = 0; k < xv.size(); ++k) {
    if (yv[k] != 0) {
      EXPECT_DOUBLE_EQ(yv[k], 2 * xv[k]);
    }
  }
}

TEST(Dropout, EdgeProbabilitiesAndEvaluation) {
  Tensor x = ones({50}, device());
  EXPECT_EQ(dropout(x, 1).to_vector<float>(), std::vector<float>(50, 0.0f));
  EXPECT_EQ(dropout(x, 0).impl_ptr(), x.impl_ptr());
  EXPECT_EQ(dropout(x, 0.5, false).impl_ptr(), x.impl_ptr());
}

TEST(Dropout, RejectsBadProbabilities) {
  Tensor x = ones({4});
  for (double p : {-0.1, 1.5, std::nan("")}) EXPECT_TRUE(starts_with(error_of([&] { dropout(x, p); }), "dropout: p must be in [0, 1]")) << p;
  EXPECT_TRUE(starts_with(error_of([] { dropout(ones({4}, cpu, DType::i64), 0.5); }), "dropout:"));
}

// ---- errors and the documented calls -------------------------------------------------------

TEST(Creation, NegativeSizesNameTheOp) {
  EXPECT_TRUE(starts_with(error_of([] { zeros({2, -1}); }), "full: shape [2, -1] has a negative extent"));
  EXPECT_TRUE(starts_with(error_of([] { full({-3}, 1.0, device()); }), "full:"));
  EXPECT_TRUE(starts_with(error_of([] { rand({-1}); }), "rand:"));
  EXPECT_TRUE(starts_with(error_of([] { randn({3, -2}, device()); }), "randn:"));
  EXPECT_TRUE(starts_with(error_of([] { randint(0, 5, {-4}); }), "randint:"));
  EXPECT_TRUE(starts_with(error_of([] { eye(-2); }), "eye:"));
  EXPECT_TRUE(starts_with(error_of([] { eye(2, -3); }), "eye:"));
  EXPECT_TRUE(starts_with(error_of([] { linspace(0, 1, -1); }), "linspace:"));
}

TEST(Creation, ArangeRejectsBadSteps) {
  EXPECT_TRUE(starts_with(error_of([] { arange(0, 5, 0); }), "arange: step must be nonzero"));
  EXPECT_TRUE(starts_with(error_of([] { arange(0.0, 1.0, 0.0); }), "arange: step must be nonzero"));
  EXPECT_TRUE(starts_with(error_of([] { arange(0, 5, -1); }), "arange: the range from 0 to 5 is inconsistent"));
  EXPECT_TRUE(starts_with(error_of([] { arange(1.0, -1.0, 0.5, device()); }), "arange:"));
  EXPECT_TRUE(starts_with(error_of([] { arange(0.0, INFINITY); }), "arange:"));
  EXPECT_TRUE(starts_with(error_of([] { arange(0, 5, 1, cpu, DType::boolean); }), "arange:"));
}

TEST(Creation, RejectsDtypesWithoutKernels) {
  EXPECT_TRUE(starts_with(error_of([] { rand({2}, cpu, DType::i64); }), "rand: expected a floating dtype"));
  EXPECT_TRUE(starts_with(error_of([] { randint(0, 3, {2}, cpu, DType::boolean); }), "randint:"));
  EXPECT_TRUE(starts_with(error_of([] { randint(0, std::int64_t{1} << 40, {2}, cpu, DType::i32); }), "randint:"));
  EXPECT_TRUE(starts_with(error_of([] { randint(4, 4, {2}); }), "randint: low must be less than high"));
}

/// A bf16 creation is the f32 one rounded to nearest even (it is made in f32 and cast), on
/// both devices; the random ones draw the f32 values of the same seed. rand is the exception,
/// its draws truncated (Random.Bf16RandIsTheF32DrawTruncated).
TEST(Creation, Bf16IsTheF32ValuesRounded) {
  auto rounded = [](const Tensor& t) {
    std::vector<double> v;
    for (float x : t.to_vector<float>()) v.push_back(round_bf16(x));
    return v;
  };
  std::vector<std::function<Tensor(Device, DType)>> makers = {
      [](Device d, DType t) { return full({2, 3}, 0.1, d, t); },
      [](Device d, DType t) { return zeros({5}, d, t); },
      [](Device d, DType t) { return arange(-1.0, 2.0, 0.3, d, t); },
      [](Device d, DType t) { return linspace(0.1, 0.7, 100, d, t); },
      [](Device d, DType t) { return eye(3, 4, d, t); },
      [](Device d, DType t) { manual_seed(9); return randn({7, 40}, d, t); },
      [](Device d, DType t) { manual_seed(9); return randint(-300, 300, {50}, d, t); },
  };
  for (Device d : {cpu, device()})
    for (std::size_t k = 0; k < makers.size(); ++k) {
      SCOPED_TRACE("maker " + std::to_string(k) + " on " + d.str());
      Tensor h = makers[k](d, DType::bf16);
      Tensor f = makers[k](d, DType::f32);
      EXPECT_EQ(h.dtype(), DType::bf16);
      EXPECT_EQ(h.sizes(), f.sizes());
      EXPECT_EQ(h.to(DType::f64).to_vector<double>(), rounded(f));
    }
}

TEST(Creation, DocumentedCallsWork) {
  Tensor a = randn({2, 2}, device());
  Tensor b = full({2, 2}, 1.5f, device());
  Tensor c = zeros({3}, device());
  for (const Tensor& t : {a, b, c}) {
    EXPECT_EQ(t.device(), device());
    EXPECT_EQ(t.dtype(), DType::f32);
  }
  EXPECT_EQ(b.to_vector<float>(), std::vector<float>(4, 1.5f));
  EXPECT_EQ(c.to_vector<float>(), std::vector<float>(3, 0.0f));
  EXPECT_EQ(a.sizes(), (std::vector<std::int64_t>{2, 2}));
}

}  // namespace
}  // namespace lt::test

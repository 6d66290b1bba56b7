// IEEE f16 (torch.half) end to end: its conversions bit for bit against plain loops written
// from the format's definition, every f16 pattern and the f32 values around each; ops on f16
// rounding once per op; products widened to f32; random draws; autocast to f16; safetensors
// F16. Run at every kernel level (ops_tests@level), so the F16C paths are checked as well.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <lazytensor/distributed.hpp>
#include <lazytensor/io.hpp>
#include <lazytensor/lazytensor.hpp>

#include "op_harness.hpp"

namespace lt {
namespace {

/// The value of f16 pattern h, from the definition: (-1)^s 2^(e-15) (1 + f/1024), or
/// 2^-14 f/1024 for e = 0; infinity and NaN for e = 31.
double value_of(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f, f = h & 0x3ff;
  const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
  if (e == 31) return f == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (e == 0) return sign * std::ldexp(f, -24);
  return sign * std::ldexp(1024 + f, e - 25);
}

/// The f16 pattern of x, which f16 holds exactly (test::round_f16 gives such values).
std::uint16_t pattern_of(double x) {
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  x = std::abs(x);
  if (std::isinf(x)) return sign | 0x7c00;
  if (x < std::ldexp(1.0, -14)) return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(x * 0x1p24));
  int e;
  const double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  return static_cast<std::uint16_t>(sign | ((e + 14) << 10) | (static_cast<int>(m * 2048) - 1024));
}

/// f32 x rounded to f16 as a plain loop rounds it: nearest even; a NaN quiet, its sign and
/// top payload bits kept (as F16C keeps them).
std::uint16_t reference_round(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if (std::isnan(x)) return static_cast<std::uint16_t>(((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu));
  return pattern_of(test::round_f16(x));
}

std::vector<std::uint16_t> patterns_of(const Tensor& t) {
  const std::vector<float16> v = t.to_vector<float16>();
  std::vector<std::uint16_t> bits;
  for (float16 h : v) bits.push_back(h.bits);
  return bits;
}

class F16OnDevice : public ::testing::TestWithParam<Device> {};

TEST_P(F16OnDevice, EveryPatternWidensExactly) {
  std::vector<float16> all;
  for (std::uint32_t h = 0; h < 0x10000; ++h) all.push_back(float16::from_bits(static_cast<std::uint16_t>(h)));
  Tensor a = from_vector(all, GetParam());
  ASSERT_EQ(a.dtype(), f16);
  const std::vector<float> wide = a.to(f32).to_vector<float>();
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const double want = value_of(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(wide[h])) << std::hex << h;
      EXPECT_EQ(std::bit_cast<std::uint32_t>(wide[h]) >> 13 & 0x3ffu, h & 0x3ffu) << "payload kept, " << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(wide[h]), want) << std::hex << h;
      ASSERT_EQ(std::signbit(wide[h]), (h & 0x8000) != 0) << std::hex << h;
    }
  }
}

TEST_P(F16OnDevice, F32RoundsToNearestEvenAsAPlainLoop) {
  // Each f16 value, the ties halfway to its neighbours and the f32 values just inside and
  // outside them: ties, subnormals, the overflow boundary at 65520, and signed NaNs.
  std::vector<float> xs;
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const double v = value_of(static_cast<std::uint16_t>(h));
    if (!std::isfinite(v)) {
      xs.push_back(static_cast<float>(v));
      continue;
    }
    const double next = std::abs(value_of(static_cast<std::uint16_t>(h + 1))), here = std::abs(v);
    const double tie = std::isfinite(next) ? (here + next) / 2 : 65520.0;
    for (double x : {here, tie}) {
      const float f = static_cast<float>(std::copysign(x, v));
      xs.insert(xs.end(), {f, std::nextafter(f, 0.0f), std::nextafter(f, std::copysign(INFINITY, f))});
    }
  }
  xs.insert(xs.end(), {std::bit_cast<float>(0xffc12345u), std::bit_cast<float>(0x7f812345u), 1e-30f, -1e30f});
  const std::vector<std::uint16_t> got = patterns_of(from_vector(xs, GetParam()).to(f16));
  ASSERT_EQ(got.size(), xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i)
    ASSERT_EQ(got[i], reference_round(xs[i])) << std::hex << std::bit_cast<std::uint32_t>(xs[i]) << " (" << xs[i] << ")";
}

TEST_P(F16OnDevice, EachOpRoundsItsF32ResultOnce) {
  std::vector<float> va, vb;
  for (int k = 0; k < 4099; ++k) {  // a length with a tail past every packet width
    va.push_back(std::ldexp(1.0f + static_cast<float>(k % 977) / 977.0f, k % 23 - 12) * (k % 3 == 0 ? -1.0f : 1.0f));
    vb.push_back(1.0f + static_cast<float>(k % 61) * 0x1p-11f);
  }
  Tensor a = from_vector(va, GetParam()).to(f16), b = from_vector(vb, GetParam()).to(f16);
  Tensor out = relu(a * b + 0.3) - b;
  ASSERT_EQ(out.dtype(), f16);
  const std::vector<std::uint16_t> got = patterns_of(out);
  const std::vector<float> wa = a.to(f32).to_vector<float>(), wb = b.to(f32).to_vector<float>();
  auto r = [](float x) { return static_cast<float>(value_of(reference_round(x))); };
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float p = r(wa[i] * wb[i]), s = r(p + 0.3f), l = r(s < 0 ? 0.0f : s), want = r(l - wb[i]);
    ASSERT_EQ(got[i], reference_round(want)) << i;
  }
}

TEST_P(F16OnDevice, ProductsWidenToF32AndRoundOnce) {
  const std::int64_t n = 37, k = 70, m = 45;
  Tensor a = randn({n, k}, GetParam(), f16), b = randn({k, m}, GetParam(), f16);
  Tensor c = matmul(a, b);
  ASSERT_EQ(c.dtype(), f16);
  const std::vector<float> wide = matmul(a.to(f32), b.to(f32)).to_vector<float>();
  const std::vector<std::uint16_t> got = patterns_of(c);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], reference_round(wide[i])) << i;
  Tensor x = randn({2, 3, 8, 8}, GetParam(), f16), w = randn({4, 3, 3, 3}, GetParam(), f16);
  Tensor y = conv2d(x, w);
  ASSERT_EQ(y.dtype(), f16);
  const std::vector<float> y32 = conv2d(x.to(f32), w.to(f32)).to_vector<float>();
  const std::vector<std::uint16_t> ygot = patterns_of(y);
  for (std::size_t i = 0; i < ygot.size(); ++i) ASSERT_EQ(ygot[i], reference_round(y32[i])) << i;
}

TEST_P(F16OnDevice, RandDrawsElevenBitsAndNeverOne) {
  manual_seed(11);
  const std::vector<float> got = rand({1 << 15}, GetParam(), f16).to(f32).to_vector<float>();
  float hi = 0;
  for (float x : got) {
    ASSERT_TRUE(x >= 0.0f && x < 1.0f) << x;
    ASSERT_EQ(x * 2048.0f, std::floor(x * 2048.0f)) << x << " is a multiple of 2^-11";
    hi = std::max(hi, x);
  }
  EXPECT_EQ(hi, 2047.0f / 2048) << "the largest f16 below 1 is drawn";
  EXPECT_EQ(randn({4, 4}, GetParam(), f16).dtype(), f16);
  EXPECT_EQ(full({2}, 65519.0, GetParam(), f16).to(f32).to_vector<float>(), (std::vector<float>{65504, 65504}));
  EXPECT_TRUE(std::isinf(full({1}, 65520.0, GetParam(), f16).to(f32).item<float>()));
}

TEST_P(F16OnDevice, PromotionAndErrorsAreBf16s) {
  Tensor h = full({2, 3}, 0.5, GetParam(), f16), g = full({2, 3}, 0.5, GetParam(), bf16);
  Tensor f = full({2, 3}, 0.5, GetParam());
  EXPECT_EQ((h + f).dtype(), f32);
  EXPECT_EQ((h * 0.1).dtype(), f16);
  EXPECT_EQ((h + g).dtype(), f32) << "bf16 and f16 meet at f32, as torch.promote_types";
  EXPECT_EQ((h > 0).dtype(), boolean);
  EXPECT_EQ(sum(h).dtype(), f16);
  EXPECT_THROW((void)(h + full({4}, 1.0, GetParam(), f16)), Error);
  if (GetParam().is_lazy()) {
    EXPECT_THROW(all_reduce(ReduceOp::sum, h), Error) << "collectives exchange f32 values, as bf16's";
  }
}

TEST_P(F16OnDevice, AutocastToF16RunsProductsInF16) {
  Tensor a = randn({16, 32}, GetParam()), b = randn({32, 8}, GetParam());
  Tensor c;
  {
    autocast guard(f16);
    EXPECT_EQ(autocast_dtype(), f16);
    c = matmul(a, b);
  }
  ASSERT_EQ(c.dtype(), f16);
  const std::vector<float> wide = matmul(a.to(f16).to(f32), b.to(f16).to(f32)).to_vector<float>();
  const std::vector<std::uint16_t> got = patterns_of(c);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], reference_round(wide[i])) << i;
  EXPECT_THROW({ autocast guard(i32); }, Error);
}

INSTANTIATE_TEST_SUITE_P(EagerAndLazy, F16OnDevice, ::testing::Values(cpu, device()),
                         [](const auto& info) { return info.param.is_lazy() ? std::string("lazy") : std::string("eager"); });

TEST(F16, SafetensorsHoldsF16AsF16) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("lt_f16_" + std::to_string(::getpid()) + ".safetensors");
  std::vector<float16> values;
  for (std::uint16_t h : {0x3c00, 0x0001, 0xfbff, 0x7c00, 0x3555}) values.push_back(float16::from_bits(h));
  save({{"h", from_vector(values)}}, file.string());
  const TensorMap back = load(file.string());
  std::filesystem::remove(file);
  ASSERT_EQ(back.at("h").dtype(), f16);
  EXPECT_EQ(patterns_of(back.at("h")), (std::vector<std::uint16_t>{0x3c00, 0x0001, 0xfbff, 0x7c00, 0x3555}));
  EXPECT_EQ(io::safetensors_name(f16), "F16");
}

}  // namespace
}  // namespace lt

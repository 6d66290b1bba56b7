#pragma once
// IEEE 754 binary16 storage (PyTorch's torch.half). As with bfloat16, ops never compute in it:
// they widen to f32 (exactly), compute, and round the result back once, to nearest even.
#include <bit>
#include <cstdint>
#include <type_traits>

#include "lazytensor/core/bfloat16.hpp"

namespace lt {

/// An f16 value as stored: conversions only, no arithmetic (computing happens in f32).
struct float16 {
  std::uint16_t bits = 0;  ///< sign, 5 exponent bits (bias 15), 10 fraction bits

  /// Zero.
  float16() = default;
  /// Rounds `f` to nearest even: past the largest finite value (65504) to infinity, below the
  /// smallest normal to a subnormal; a NaN stays a quiet NaN of the same sign, as F16C rounds.
  explicit float16(float f) : bits(round(f)) {}
  /// From another arithmetic type through f32, as c10::Half converts.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, float>)
  explicit float16(T v) : float16(static_cast<float>(v)) {}

  /// From bf16 through f32 (exact there), so rounded once.
  explicit float16(bfloat16 b) : float16(static_cast<float>(b)) {}

  /// Exact widening to f32.
  explicit operator float() const { return std::bit_cast<float>(widen(bits)); }
  /// To bf16 through f32 (exact there), so rounded once.
  explicit operator bfloat16() const { return bfloat16(static_cast<float>(*this)); }
  /// To another arithmetic type through f32.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, float>)
  explicit operator T() const {
    return static_cast<T>(static_cast<float>(*this));
  }

  /// A value from its bit pattern.
  static float16 from_bits(std::uint16_t b) {
    float16 x;
    x.bits = b;
    return x;
  }

  /// The f16 bit pattern nearest to `f` (ties to even).
  static constexpr std::uint16_t round(float f) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN, quiet
    if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // at least 65520: infinity
    if (a >= 0x38800000u) {  // a normal f16: rebias the exponent, round off 13 fraction bits
      const std::uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
      return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
    }
    // Below 2^-14: a multiple of 2^-24, the significand shifted right by 14 to 24 places.
    const std::uint32_t exponent = a >> 23;
    if (exponent < 102) return sign;  // below 2^-25 (float subnormals too): zero
    const std::uint32_t significand = (a & 0x7fffffu) | 0x800000u, shift = 126 - exponent;
    std::uint32_t m = significand >> shift;
    const std::uint32_t rest = significand & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (m & 1u) != 0)) ++m;  // 1024 is the smallest normal's pattern
    return static_cast<std::uint16_t>(sign | m);
  }

  /// The f32 bit pattern of f16 pattern `h`, exactly.
  static constexpr std::uint32_t widen(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu, fraction = h & 0x3ffu;
    if (exponent == 0x1f) return sign | 0x7f800000u | (fraction << 13);  // infinity, NaN
    if (exponent != 0) return sign | ((exponent + 112) << 23) | (fraction << 13);
    if (fraction == 0) return sign;
    // A subnormal: fraction x 2^-24, normalised.
    const int lead = std::bit_width(fraction) - 1;  // 0 .. 9
    return sign | (static_cast<std::uint32_t>(lead + 103) << 23) | ((fraction << (23 - lead)) & 0x7fffffu);
  }
};

}  // namespace lt

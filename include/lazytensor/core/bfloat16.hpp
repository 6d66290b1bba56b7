#pragma once
// bfloat16 storage: the upper half of an IEEE f32. Ops never compute in it: they widen to f32
// (exactly), compute, and round the result back once, to nearest even, as PyTorch's CPU
// kernels do.
#include <bit>
#include <cstdint>
#include <type_traits>

namespace lt {

/// A bfloat16 value as stored: conversions only, no arithmetic (computing happens in f32).
struct bfloat16 {
  std::uint16_t bits = 0;  ///< The f32 bit pattern's upper 16 bits.

  /// Zero.
  bfloat16() = default;
  /// Rounds `f` to nearest even; a NaN stays a quiet NaN of the same sign.
  explicit bfloat16(float f) : bits(round(f)) {}
  /// From another arithmetic type through f32, as c10::BFloat16 converts.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, float>)
  explicit bfloat16(T v) : bfloat16(static_cast<float>(v)) {}

  /// Exact widening to f32.
  explicit operator float() const { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }
  /// To another arithmetic type through f32.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, float>)
  explicit operator T() const {
    return static_cast<T>(static_cast<float>(*this));
  }

  /// A value from its bit pattern.
  static bfloat16 from_bits(std::uint16_t b) {
    bfloat16 x;
    x.bits = b;
    return x;
  }
  /// The bf16 bit pattern nearest to `f` (ties to even).
  static std::uint16_t round(float f) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // NaN: keep it quiet
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
  }
};

}  // namespace lt

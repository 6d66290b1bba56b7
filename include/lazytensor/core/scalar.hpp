#pragma once
// lt::Scalar: a C++ number used as a tensor operand.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "lazytensor/core/dtype.hpp"

namespace lt {

/// A C++ number used as an operand: weakest in type promotion, like a Python scalar.
struct Scalar {
  double f = 0;
  std::int64_t i = 0;
  DType dtype = DType::f64;  // f64, i64 or boolean

  // The integer view of a floating scalar is unused; keep it defined for NaN and huge values.
  Scalar(double v) : f(v), i(std::abs(v) < 9.2e18 ? static_cast<std::int64_t>(v) : 0) {}  // NOLINT: implicit on purpose
  Scalar(float v) : Scalar(static_cast<double>(v)) {}          // NOLINT
  Scalar(bool v) : f(v), i(v), dtype(DType::boolean) {}         // NOLINT
  template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
  Scalar(I v) : f(static_cast<double>(v)), i(static_cast<std::int64_t>(v)), dtype(DType::i64) {}  // NOLINT

  /// The value converted to T as a zero-dim tensor of `dtype` would be.
  template <class T> T as() const { return dtype == DType::f64 ? static_cast<T>(f) : static_cast<T>(i); }
};

/// Types that become a Scalar operand.
template <class X>
concept scalar_like = std::is_arithmetic_v<std::remove_cvref_t<X>> || std::is_same_v<std::remove_cvref_t<X>, Scalar>;

}  // namespace lt

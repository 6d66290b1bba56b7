#pragma once
// lt::Scalar: a C++ number used as a tensor operand.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "lazytensor/core/dtype.hpp"

namespace lt {

/// A C++ number used as an operand: weakest in type promotion, like a Python scalar.
struct Scalar {
  /// The value as a double (for floating and bool scalars; exact for integers up to 2^53).
  double f = 0;
  /// The value as an integer (for integral and bool scalars; 0 for floating values out of range).
  std::int64_t i = 0;
  /// f64 for a floating value, i64 for an integer, boolean for a bool.
  DType dtype = DType::f64;  // f64, i64 or boolean

  // The integer view of a floating scalar is unused; keep it defined for NaN and huge values.
  /// A floating scalar (implicit, so `t * 0.5` works).
  Scalar(double v) : f(v), i(std::abs(v) < 9.2e18 ? static_cast<std::int64_t>(v) : 0) {}  // NOLINT: implicit on purpose
  /// A floating scalar, stored as a double.
  Scalar(float v) : Scalar(static_cast<double>(v)) {}          // NOLINT
  /// A bool scalar.
  Scalar(bool v) : f(v), i(v), dtype(DType::boolean) {}         // NOLINT
  /// An integral scalar, stored as i64.
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

#pragma once
// Checked sizes: the products and sums behind element counts, strides, byte counts, padding
// and windows. A count that wraps reaches an allocation or a kernel as a small number and
// turns into a read or write out of bounds, so every such count is made here and raises
// lt::Error naming what it counts instead of wrapping.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "lazytensor/core/error.hpp"
#include "lazytensor/core/shape.hpp"

namespace lt {

/// a * b, or lt::Error naming `what` where it does not fit 64 bits.
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  LT_CHECK(!__builtin_mul_overflow(a, b, &r), what, ": ", a, " * ", b, " overflows 64 bits");
  return r;
}

/// a + b, or lt::Error naming `what` where it does not fit 64 bits.
inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  LT_CHECK(!__builtin_add_overflow(a, b, &r), what, ": ", a, " + ", b, " overflows 64 bits");
  return r;
}

/// The element count of `s`, checked: extents are non-negative and the product of the
/// non-zero ones fits 64 bits, so that strides and offsets over the shape fit as well (a zero
/// extent beside extents of 2^32 holds no element, but its strides would still wrap).
inline std::int64_t checked_numel(const Shape& s, const char* what) {
  std::int64_t strided = 1;
  bool empty = false;
  for (std::int64_t d : s) {
    LT_CHECK(d >= 0, what, ": negative extent ", d, " in shape ", s);
    if (d == 0) empty = true;
    else strided = checked_mul(strided, d, what);
  }
  return empty ? 0 : strided;
}

/// The bytes of `s` elements of `item` bytes each, checked.
inline std::int64_t checked_bytes(const Shape& s, std::size_t item, const char* what) {
  return checked_mul(checked_numel(s, what), static_cast<std::int64_t>(item), what);
}

/// The extent of a sliding window's output: floor((in + 2 * pad - dilation * (kernel - 1) - 1)
/// / stride) + 1, with every term checked; lt::Error where the window is larger than the
/// padded input (as PyTorch raises).
inline std::int64_t checked_window_extent(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                                          std::int64_t dilation, const char* what) {
  LT_CHECK(kernel > 0 && stride > 0 && dilation > 0 && pad >= 0, what, ": kernel ", kernel, ", stride ", stride,
           ", dilation ", dilation, " must be positive and padding ", pad, " non-negative");
  const std::int64_t padded = checked_add(in, checked_mul(2, pad, what), what);
  const std::int64_t span = checked_add(checked_mul(dilation, kernel - 1, what), 1, what);
  LT_CHECK(span <= padded, what, ": the window (", span, ") is larger than the padded input (", padded, ")");
  return (padded - span) / stride + 1;
}

}  // namespace lt

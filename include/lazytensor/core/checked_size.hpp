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

/// PyTorch's output extent of a sliding window (pooling_output_shape, conv's output size):
/// floor((in + 2 * pad - dilation * (kernel - 1) - 1 [+ stride - 1 with ceil_mode]) / stride)
/// + 1, where with ceil_mode the last window must start inside the input or its left padding.
/// Every term is checked, and the division floors: a window larger than the padded input
/// gives 0 or less, which the caller raises as PyTorch does. Expects stride, kernel and
/// dilation positive and padding non-negative (callers check them first, naming the op).
inline std::int64_t checked_window_extent(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                                          std::int64_t dilation, bool ceil_mode, const char* what) {
  const std::int64_t padded = checked_add(in, checked_mul(2, pad, what), what);
  const std::int64_t reach = checked_add(checked_mul(dilation, kernel - 1, what), 1, what);
  std::int64_t span = padded - reach;  // both non-negative: cannot wrap
  if (ceil_mode) span = checked_add(span, stride - 1, what);
  std::int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && out > 0 && (out - 1) * stride >= in + pad) --out;  // (out - 1) * stride <= span: fits
  return out;
}

}  // namespace lt

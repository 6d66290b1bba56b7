#pragma once
// Integer arithmetic that wraps modulo 2^bits, as PyTorch's integer tensors do, with no
// undefined behaviour: a signed value is computed in the unsigned type of its width (at least
// unsigned int, which no promotion makes signed again), and converted back, which C++20
// defines as the same wrap. Floating values and bools compute as they are.
#include <type_traits>

namespace lt {

namespace detail {
template <class T>
constexpr bool wraps = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
using wrap_unsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
}  // namespace detail

template <class T> constexpr T wrapping_add(T a, T b) {
  if constexpr (detail::wraps<T>) return static_cast<T>(detail::wrap_unsigned<T>(a) + detail::wrap_unsigned<T>(b));
  else return static_cast<T>(a + b);
}
template <class T> constexpr T wrapping_sub(T a, T b) {
  if constexpr (detail::wraps<T>) return static_cast<T>(detail::wrap_unsigned<T>(a) - detail::wrap_unsigned<T>(b));
  else return static_cast<T>(a - b);
}
template <class T> constexpr T wrapping_mul(T a, T b) {
  if constexpr (detail::wraps<T>) return static_cast<T>(detail::wrap_unsigned<T>(a) * detail::wrap_unsigned<T>(b));
  else return static_cast<T>(a * b);
}
template <class T> constexpr T wrapping_neg(T x) {
  if constexpr (detail::wraps<T>) return static_cast<T>(detail::wrap_unsigned<T>(0) - detail::wrap_unsigned<T>(x));
  else return static_cast<T>(-x);
}

}  // namespace lt

#pragma once
// Binary and ternary elementwise ops with NumPy broadcasting and PyTorch type promotion.
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "lazytensor/ops/elementwise_rules.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/binary_grad.hpp"
#include "lazytensor/ops/kernels/packet.hpp"
#include "lazytensor/ops/wrapping.hpp"

namespace lt::binary {

namespace pk = kernels::pk;

template <class T> constexpr bool is_int = std::is_integral_v<T>;

struct Add {
  template <class T> T operator()(T a, T b) const { return wrapping_add(a, b); }
  template <class P> P packet(const P& a, const P& b) const { return pk::padd(a, b); }
};
struct Sub {
  template <class T> T operator()(T a, T b) const { return wrapping_sub(a, b); }
  template <class P> P packet(const P& a, const P& b) const { return pk::psub(a, b); }
};
struct Mul {
  template <class T> T operator()(T a, T b) const { return wrapping_mul(a, b); }
  template <class P> P packet(const P& a, const P& b) const { return pk::pmul(a, b); }
};
struct Div {
  template <class T> T operator()(T a, T b) const { return a / b; }
  template <class P> P packet(const P& a, const P& b) const { return pk::pdiv(a, b); }
  /// By one divisor: multiplied by its reciprocal and corrected to the bits of division.
  template <class T> requires std::is_floating_point_v<T> pk::DivideBy<T> with_last(T b) const { return pk::DivideBy<T>(b); }
};
struct Pow {
  template <class T> T operator()(T a, T b) const {
    if constexpr (is_int<T>) {
      if (b < 0) {
        // Integer results of negative powers are 0 except for bases 1 and -1 (0 included,
        // as PyTorch's integer pow).
        return a == 1 ? T(1) : a == -1 ? (b % 2 ? T(-1) : T(1)) : T(0);
      }
      T r = 1;  // wraps on overflow, as PyTorch's integer pow
      for (T base = a, e = b; e; e >>= 1, base = wrapping_mul(base, base))
        if (e & 1) r = wrapping_mul(r, base);
      return r;
    } else {
      return std::pow(a, b);
    }
  }
};
/// Fn, Maximum (Max true) or Minimum, with one fixed second operand b, bit for bit: where b is
/// not NaN, a packet takes one max (or min) instruction, which gives a where a is NaN.
template <class Fn, bool Max, class T> struct MinMaxWith {
  T b;
  T operator()(T a) const { return Fn{}(a, b); }
  template <class P> P packet(const P& a) const {
    const P vb = Eigen::internal::pset1<P>(b);
#if defined(__SSE2__)
    if (b == b) return Max ? Eigen::internal::pmax(a, vb) : Eigen::internal::pmin(a, vb);
#endif
    return pk::pminmax_nan<Max>(a, vb);
  }
};
/// NaN in either operand gives NaN, as torch.maximum.
struct Maximum {
  static constexpr bool selects_operand = true;  ///< its result is one of its operands (bf16_map.hpp)
  template <class T> T operator()(T a, T b) const {
    if constexpr (!is_int<T>) if (a != a || b != b) return a != a ? a : b;
    return a < b ? b : a;
  }
  template <class P> P packet(const P& a, const P& b) const {
    return pk::pminmax_nan<true>(a, b);
  }
  template <class T> requires std::is_floating_point_v<T> MinMaxWith<Maximum, true, T> with_last(T b) const { return {b}; }
};
struct Minimum {
  static constexpr bool selects_operand = true;  ///< its result is one of its operands (bf16_map.hpp)
  template <class T> T operator()(T a, T b) const {
    if constexpr (!is_int<T>) if (a != a || b != b) return a != a ? a : b;
    return b < a ? b : a;
  }
  template <class P> P packet(const P& a, const P& b) const {
    return pk::pminmax_nan<false>(a, b);
  }
  template <class T> requires std::is_floating_point_v<T> MinMaxWith<Minimum, false, T> with_last(T b) const { return {b}; }
};
/// C's fmod: the result has the sign of the dividend.
struct Fmod {
  template <class T> T operator()(T a, T b) const {
    if constexpr (is_int<T>) {
      LT_CHECK(b != 0, "fmod: integer division by zero");
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return T(0);  // the remainder of every value, and INT_MIN % -1 would trap
      return static_cast<T>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
struct Hypot { template <class T> T operator()(T a, T b) const { return std::hypot(a, b); } };
struct Atan2 { template <class T> T operator()(T a, T b) const { return std::atan2(a, b); } };
struct Eq {
  template <class T> bool operator()(T a, T b) const { return a == b; }
  template <class P> P packet(const P& a, const P& b) const { return pk::mask_to_value(pk::pcmp_eq(a, b)); }
};
struct Ne { template <class T> bool operator()(T a, T b) const { return a != b; } };
struct Lt {
  template <class T> bool operator()(T a, T b) const { return a < b; }
  template <class P> P packet(const P& a, const P& b) const { return pk::mask_to_value(pk::pcmp_lt(a, b)); }
};
struct Le {
  template <class T> bool operator()(T a, T b) const { return a <= b; }
  template <class P> P packet(const P& a, const P& b) const { return pk::mask_to_value(pk::pcmp_le(a, b)); }
};
struct Gt {
  template <class T> bool operator()(T a, T b) const { return a > b; }
  template <class P> P packet(const P& a, const P& b) const { return pk::mask_to_value(pk::pcmp_lt(b, a)); }
};
struct Ge {
  template <class T> bool operator()(T a, T b) const { return a >= b; }
  template <class P> P packet(const P& a, const P& b) const { return pk::mask_to_value(pk::pcmp_le(b, a)); }
};
struct LogicalAnd { template <class T> bool operator()(T a, T b) const { return a != T(0) && b != T(0); } };
struct LogicalOr { template <class T> bool operator()(T a, T b) const { return a != T(0) || b != T(0); } };
/// The condition arrives converted to the compute type: non-zero means true.
struct Where {
  template <class T> T operator()(T c, T a, T b) const { return c != T(0) ? a : b; }
  template <class P> P packet(const P& c, const P& a, const P& b) const {
    return pk::pselect(pk::pcmp_eq(c, pk::splat<P>(0)), b, a);
  }
};

/// Integer fmod needs a non-bool type; bool operands promote nothing, so reject them.
using IntOrFloat = rules::Promote<false>;

/// As PyTorch, subtraction rejects a bool operand even when the other one promotes it: on
/// masks `-` is a mistake for logical_not.
struct NoBoolOperands : rules::Promote<> {
  static DType result(std::span<const Meta> in) {
    for (const Meta& m : in)
      LT_CHECK(m.dtype != DType::boolean, "not supported for bool operands (to invert a mask use logical_not)");
    return result_type(in);
  }
};

LT_BINARY_TABLE(LT_BINARY_DESCRIPTOR)
LT_TERNARY_TABLE(LT_TERNARY_DESCRIPTOR)

}  // namespace lt::binary

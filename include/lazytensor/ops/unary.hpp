#pragma once
// Unary elementwise ops: a functor and a dtype rule each.
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "lazytensor/ops/elementwise_rules.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/unary_grad.hpp"
#include "lazytensor/ops/kernels/packet.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/ops/wrapping.hpp"

namespace lt::unary {

namespace pk = kernels::pk;

template <class T> constexpr bool is_int = std::is_integral_v<T>;

struct Neg {
  static constexpr bool selects_operand = true;  ///< its result is its operand negated (bf16_map.hpp)
  template <class T> T operator()(T x) const { return wrapping_neg(x); }
  // The sign flipped, as -x: Eigen's AVX-512 pnegate is 0 - x, which gives +0 for 0.
  template <class P> P packet(const P& x) const {
    if constexpr (std::is_floating_point_v<kernels::packet_scalar_t<P>> && !std::is_floating_point_v<P>) return Eigen::internal::pxor(x, pk::splat<P>(-0.0));
    else return pk::pnegate(x);
  }
};
struct Abs {
  template <class T> T operator()(T x) const {
    if constexpr (is_int<T>) return x < 0 ? wrapping_neg(x) : x;  // abs(INT_MIN) wraps to itself, as in PyTorch
    else return std::abs(x);
  }
};
/// f32 computes on SIMD packets (a scalar goes through a packet too, so that every path gives
/// the same bits); f64 uses libm.
struct Exp {
  template <class T> T operator()(T x) const {
    if constexpr (std::is_same_v<T, float> && kernels::packet_lanes<float> > 1)
      return pk::through_packet(x, [](const auto& p) { return pk::exp_float(p); });
    else return std::exp(x);
  }
  template <class P>
    requires std::is_same_v<kernels::packet_scalar_t<P>, float>
  P packet(const P& x) const { return pk::exp_float(x); }
};
struct Log { template <class T> T operator()(T x) const { return std::log(x); } };
struct Log2 { template <class T> T operator()(T x) const { return std::log2(x); } };
struct Log1p { template <class T> T operator()(T x) const { return std::log1p(x); } };
struct Expm1 { template <class T> T operator()(T x) const { return std::expm1(x); } };
struct Sqrt { template <class T> T operator()(T x) const { return std::sqrt(x); } };
struct Rsqrt { template <class T> T operator()(T x) const { return T(1) / std::sqrt(x); } };
struct Sin { template <class T> T operator()(T x) const { return std::sin(x); } };
struct Cos { template <class T> T operator()(T x) const { return std::cos(x); } };
struct Tanh { template <class T> T operator()(T x) const { return std::tanh(x); } };
/// f32 on SIMD packets (pk::erf_float; a scalar through a packet too, for the same bits), f64 libm.
struct Erf {
  template <class T> T operator()(T x) const {
    if constexpr (std::is_same_v<T, float> && kernels::packet_lanes<float> > 1)
      return pk::through_packet(x, [](const auto& p) { return pk::erf_float(p); });
    else return std::erf(x);
  }
  template <class P>
    requires std::is_same_v<kernels::packet_scalar_t<P>, float>
  P packet(const P& x) const { return pk::erf_float(x); }
};
struct Sigmoid { template <class T> T operator()(T x) const { return T(1) / (T(1) + std::exp(-x)); } };
struct Relu {
  static constexpr bool selects_operand = true;  ///< its result is its operand or 0 (bf16_map.hpp)
  // NaN passes through, as in PyTorch.
  template <class T> T operator()(T x) const { return x < T(0) ? T(0) : x; }
  // pmax(x, 0) is 0 > x ? 0 : x (x86's max): the same lanes in one instruction.
  template <class P> P packet(const P& x) const { return Eigen::internal::pmax(x, pk::splat<P>(0)); }
};
/// GeluAttrs: the exact (erf) form or the tanh approximation.
struct Gelu {
  bool tanh_form;
  explicit Gelu(const Attrs& a) : tanh_form(decode_or_default<GeluAttrs>(a).tanh_form) {}
  template <class T> T operator()(T x) const {
    if (tanh_form) {
      const T k = T(0.7978845608028654);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
    }
    return T(0.5) * x * (T(1) + Erf{}(x * T(0.7071067811865476)));
  }
  /// The erf form of f32 on packets, with the operations of the scalar form in its order; the
  /// tanh form has none (HasPacket is a compile-time test, so this form checks at run time).
  template <class P>
    requires std::is_same_v<kernels::packet_scalar_t<P>, float>
  P packet(const P& x) const {
    using namespace Eigen::internal;
    if (tanh_form) {
      alignas(64) float v[unpacket_traits<P>::size];
      pstoreu(v, x);
      for (float& e : v) e = (*this)(e);
      return ploadu<P>(v);
    }
    const P half_x = pmul(pset1<P>(0.5f), x);
    return pmul(half_x, padd(pset1<P>(1.f), pk::erf_float(pmul(x, pset1<P>(0.7071067811865476f)))));
  }
};
struct Silu { template <class T> T operator()(T x) const { return x / (T(1) + std::exp(-x)); } };
/// SoftplusAttrs: above the threshold softplus is linear, as in PyTorch.
struct Softplus {
  double beta, threshold;
  explicit Softplus(const Attrs& a) {
    const auto p = decode_or_default<SoftplusAttrs>(a);
    beta = p.beta;
    threshold = p.threshold;
  }
  template <class T> T operator()(T x) const {
    T bx = x * T(beta);
    return bx > T(threshold) ? x : std::log1p(std::exp(bx)) / T(beta);
  }
};
struct Sign {
  template <class T> T operator()(T x) const {
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
struct Floor { template <class T> T operator()(T x) const { if constexpr (is_int<T>) return x; else return std::floor(x); } };
struct Ceil { template <class T> T operator()(T x) const { if constexpr (is_int<T>) return x; else return std::ceil(x); } };
/// Half to even, as torch.round.
struct Round { template <class T> T operator()(T x) const { if constexpr (is_int<T>) return x; else return std::nearbyint(x); } };
struct Reciprocal {
  template <class T> T operator()(T x) const { return T(1) / x; }
  template <class P> P packet(const P& x) const { return pk::pdiv(pk::splat<P>(1), x); }
};
struct LogicalNot { template <class T> bool operator()(T x) const { return x == T(0); } };
struct IsNan { template <class T> bool operator()(T x) const { if constexpr (is_int<T>) return false; else return std::isnan(x); } };
struct IsInf { template <class T> bool operator()(T x) const { if constexpr (is_int<T>) return false; else return std::isinf(x); } };

/// ClampAttrs. NaN passes through.
struct Clamp {
  bool has_min, has_max;
  double lo, hi;
  explicit Clamp(const Attrs& a) : Clamp(decode<ClampAttrs>(a)) {}
  explicit Clamp(const ClampAttrs& a) : has_min(a.has_min), has_max(a.has_max), lo(a.min), hi(a.max) {}
  template <class T> T operator()(T x) const {
    if constexpr (!is_int<T>)
      if (std::isnan(x)) return x;
    if (has_min && x < static_cast<T>(lo)) x = static_cast<T>(lo);
    if (has_max && x > static_cast<T>(hi)) x = static_cast<T>(hi);
    return x;
  }
  /// The bounds take part in type promotion: `i32_tensor.clamp(0.5)` is f32.
  static Meta infer(std::span<const Meta> in, const Attrs& attrs) {
    const auto a = decode<ClampAttrs>(attrs);
    LT_CHECK(a.has_min || a.has_max, "at least one of min and max must be given");
    Meta bound{{}, a.floating ? DType::f64 : DType::i64, true};
    Meta operands[] = {in[0], bound};
    return {in[0].shape, result_type(std::span<const Meta>(operands))};
  }
};

/// The value unchanged; a NaN or an infinity is a fault of the step, raised where the kernel
/// runs (at the next barrier or read on a lazy device), so that checking needs no read of its
/// own. CheckFiniteAttrs. Floating operands only.
struct CheckFinite {
  FiniteGuard guard;
  double order;
  explicit CheckFinite(const Attrs& attrs) {
    const auto a = decode<CheckFiniteAttrs>(attrs);
    guard = a.guard;
    order = a.order;
  }
  template <class T> T operator()(T x) const {
    if constexpr (!is_int<T>)
      if (!std::isfinite(x)) [[unlikely]] fail_at(static_cast<double>(x));
    return x;
  }
  [[noreturn]] void fail_at(double x) const {
    if (guard == FiniteGuard::grad_norm)
      fail("clip_grad_norm_: the total norm of order ", order, " of the gradients is ", x,
           ", so they cannot be clipped (error_if_nonfinite = false scales them by it anyway)");
    fail("check_finite: a value is ", x);
  }
  static Meta infer(std::span<const Meta> in, const Attrs& attrs) {
    const FiniteGuard g = decode<CheckFiniteAttrs>(attrs).guard;
    LT_CHECK(g == FiniteGuard::value || g == FiniteGuard::grad_norm, "check_finite: no guard ", static_cast<int>(g));
    LT_CHECK(is_floating(in[0].dtype), "the operand must be floating, not ",
             name(in[0].dtype));
    return {in[0].shape, in[0].dtype};
  }
};

LT_UNARY_TABLE(LT_UNARY_DESCRIPTOR)

}  // namespace lt::unary

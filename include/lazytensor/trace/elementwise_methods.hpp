#pragma once
// The elementwise methods shared by lt::Tensor and lt::Expr: `x.relu()` builds the same
// expression as `lt::relu(x)`.
#include <optional>

#include "lazytensor/core/scalar.hpp"
#include "lazytensor/ops/binary.hpp"
#include "lazytensor/ops/unary.hpp"

namespace lt {

namespace detail {
/// The expression applying Op to `operands` (tensors, expressions or C++ scalars).
template <const auto& Op, class... Xs> auto make_expr(Xs&&... operands);
template <const auto& Op, class... Xs> auto make_expr_with(Attrs attrs, Xs&&... operands);

inline Attrs clamp_attrs(const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  bool floating = (min && min->dtype == DType::f64) || (max && max->dtype == DType::f64);
  return Attrs{{min.has_value(), max.has_value(), floating}, {min ? min->f : 0.0, max ? max->f : 0.0}};
}
}  // namespace detail

template <class Derived>
class ElementwiseMethods {
 public:
  auto neg() const { return detail::make_expr<unary::neg>(self()); }
  auto abs() const { return detail::make_expr<unary::abs>(self()); }
  auto exp() const { return detail::make_expr<unary::exp>(self()); }
  auto log() const { return detail::make_expr<unary::log>(self()); }
  auto sqrt() const { return detail::make_expr<unary::sqrt>(self()); }
  auto rsqrt() const { return detail::make_expr<unary::rsqrt>(self()); }
  auto sin() const { return detail::make_expr<unary::sin>(self()); }
  auto cos() const { return detail::make_expr<unary::cos>(self()); }
  auto tanh() const { return detail::make_expr<unary::tanh>(self()); }
  auto sigmoid() const { return detail::make_expr<unary::sigmoid>(self()); }
  auto relu() const { return detail::make_expr<unary::relu>(self()); }
  auto reciprocal() const { return detail::make_expr<unary::reciprocal>(self()); }
  auto sign() const { return detail::make_expr<unary::sign>(self()); }
  auto floor() const { return detail::make_expr<unary::floor>(self()); }
  auto ceil() const { return detail::make_expr<unary::ceil>(self()); }
  auto round() const { return detail::make_expr<unary::round>(self()); }
  auto logical_not() const { return detail::make_expr<unary::logical_not>(self()); }
  auto isnan() const { return detail::make_expr<unary::isnan>(self()); }
  auto isinf() const { return detail::make_expr<unary::isinf>(self()); }
  auto clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const {
    return detail::make_expr_with<unary::clamp>(detail::clamp_attrs(min, max), self());
  }
  template <class X> auto pow(const X& exponent) const { return detail::make_expr<binary::pow>(self(), exponent); }
  template <class X> auto maximum(const X& other) const { return detail::make_expr<binary::maximum>(self(), other); }
  template <class X> auto minimum(const X& other) const { return detail::make_expr<binary::minimum>(self(), other); }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace lt

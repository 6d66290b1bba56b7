#pragma once
// The elementwise methods shared by lt::Tensor and lt::Expr: `x.relu()` builds the same
// expression as `lt::relu(x)`.
#include <optional>
#include <string_view>

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

/// The elementwise ops as methods, shared by Tensor and Expr: `x.exp()`, `x.pow(2)`, `x.relu().clamp(0, 6)`.
/// Each returns an lt::Expr (recorded when it becomes a Tensor); the op table makes one method per plain
/// unary op and per binary op.
template <class Derived>
class ElementwiseMethods {
 public:
// The table's plain unary ops and its binary ops, as methods: x.exp(), x.pow(2).
#define LT_UNARY_METHOD_plain(op) \
  auto op() const { return detail::make_expr<unary::op>(self()); }
#define LT_UNARY_METHOD_custom(op)
#define LT_UNARY_METHOD(op, number, Fn, Rule, face, ...) LT_UNARY_METHOD_##face(op)
  LT_UNARY_TABLE(LT_UNARY_METHOD)
#undef LT_UNARY_METHOD
#undef LT_UNARY_METHOD_plain
#undef LT_UNARY_METHOD_custom
#define LT_BINARY_METHOD(op, ...) \
  template <class X>              \
  auto op(const X& other) const { \
    return detail::make_expr<binary::op>(self(), other); \
  }
  LT_BINARY_TABLE(LT_BINARY_METHOD)
#undef LT_BINARY_METHOD
  /// GELU: x * Φ(x) with approximate "none" (erf), or its tanh approximation with "tanh".
  auto gelu(std::string_view approximate = "none") const;  // trace/functions/elementwise.hpp
  /// log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold, as torch.nn.functional.softplus.
  auto softplus(double beta = 1.0, double threshold = 20.0) const {
    return detail::make_expr_with<unary::softplus>(Attrs{{}, {beta, threshold}}, self());
  }
  /// Each element limited to [min, max]; either bound may be absent.
  auto clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const {
    return detail::make_expr_with<unary::clamp>(detail::clamp_attrs(min, max), self());
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace lt

#pragma once
// The elementwise methods and operators shared by lt::Tensor and lt::Expr: `x.relu()` builds the
// same expression as `lt::relu(x)`, and `x * 2` as `lt::mul(x, 2)`. Each keeps its caller's line
// (core/site.hpp) in the expression, which the node it becomes names.
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "lazytensor/core/scalar.hpp"
#include "lazytensor/core/site.hpp"
#include "lazytensor/ops/binary.hpp"
#include "lazytensor/ops/unary.hpp"

namespace lt {

class Tensor;
/// An elementwise expression not yet recorded; defined in trace/expression.hpp.
template <const auto& Op, class... Operands> class Expr;
template <class X> inline constexpr bool is_expr_v = false;
template <const auto& Op, class... Os> inline constexpr bool is_expr_v<Expr<Op, Os...>> = true;

/// A tensor or an expression: what elementwise functions need at least one of.
template <class X>
concept tensor_like = std::is_same_v<std::remove_cvref_t<X>, Tensor> || is_expr_v<std::remove_cvref_t<X>>;
template <class X>
concept elementwise_operand = tensor_like<X> || scalar_like<X>;

namespace detail {
/// The expression applying Op to `operands` (tensors, expressions or C++ scalars), written at
/// `site` (trace/expression.hpp).
template <const auto& Op, class... Xs> auto make_expr(const Site& site, Xs&&... operands);
template <const auto& Op, class... Xs> auto make_expr_with(Attrs attrs, const Site& site, Xs&&... operands);

inline Attrs clamp_attrs(const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  bool floating = (min && min->dtype == DType::f64) || (max && max->dtype == DType::f64);
  return encode(ClampAttrs{min.has_value(), max.has_value(), floating, min ? min->f : 0.0, max ? max->f : 0.0});
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
  auto op(Site site = Site::current()) const { return detail::make_expr<unary::op>(site, self()); }
#define LT_UNARY_METHOD_custom(op)
#define LT_UNARY_METHOD(op, number, Fn, Rule, face, ...) LT_UNARY_METHOD_##face(op)
  LT_UNARY_TABLE(LT_UNARY_METHOD)
#undef LT_UNARY_METHOD
#undef LT_UNARY_METHOD_plain
#undef LT_UNARY_METHOD_custom
#define LT_BINARY_METHOD(op, ...)                                  \
  template <class X>                                               \
  auto op(const X& other, Site site = Site::current()) const {     \
    return detail::make_expr<binary::op>(site, self(), other);     \
  }
  LT_BINARY_TABLE(LT_BINARY_METHOD)
#undef LT_BINARY_METHOD
  /// *this + alpha * other, as PyTorch's add(other, alpha) (trace/functions/arithmetic.hpp).
  template <class X> Tensor add(const X& other, Scalar alpha, Site site = Site::current()) const;
  /// *this - alpha * other, as PyTorch's sub(other, alpha).
  template <class X> Tensor sub(const X& other, Scalar alpha, Site site = Site::current()) const;
  /// GELU: x * Φ(x) with approximate "none" (erf), or its tanh approximation with "tanh".
  auto gelu(std::string_view approximate = "none",
            Site site = Site::current()) const;  // trace/functions/elementwise.hpp
  /// log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold, as torch.nn.functional.softplus.
  auto softplus(double beta = 1.0, double threshold = 20.0, Site site = Site::current()) const {
    return detail::make_expr_with<unary::softplus>(encode(SoftplusAttrs{beta, threshold}), site, self());
  }
  /// Each element limited to [min, max]; either bound may be absent.
  auto clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt, Site site = Site::current()) const {
    return detail::make_expr_with<unary::clamp>(detail::clamp_attrs(min, max), site, self());
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }

  /// An operator's operand of this type, with the operator's line. An operator cannot take a
  /// defaulted parameter, but the implicit conversion of its operand can: the operators below
  /// take one of their operands as an Operand, whose constructors take the line.
  class Operand {
   public:
    Operand(const Derived& x, Site site = Site::current()) : x_(&x), site_(site) {}  // NOLINT: implicit on purpose
    Operand(Derived&& x, Site site = Site::current()) : x_(&x), moved_(true), site_(site) {}  // NOLINT
    /// make(x), x moved when it was given as an rvalue (an expression written inline).
    template <class Make> auto pass(Make&& make) const {
      return moved_ ? make(std::move(*const_cast<Derived*>(x_))) : make(*x_);
    }
    const Site& site() const { return site_; }

   private:
    const Derived* x_;
    bool moved_ = false;
    Site site_;
  };

  /// The target of a compound assignment (`x += y`), with its line.
  class Target {
   public:
    Target(Derived& x, Site site = Site::current()) : x(x), site(site) {}  // NOLINT: implicit on purpose
    Derived& x;
    Site site;
  };

  // The operators, found by argument-dependent lookup as friends of the operand types. The left
  // operand is the Operand unless it is a C++ scalar: one overload fits each pair of operands.
  // The scalar-left form's constraint is a bool, not the concept: the concept would subsume
  // elementwise_operand, and clang before 16 then takes the reversed `2.5 == x` for `x != 2.5`.
#define LT_OPERATOR(sym, op)                                                                          \
  template <class B>                                                                                  \
    requires elementwise_operand<B>                                                                   \
  friend auto operator sym(Operand a, B&& b) {                                                        \
    return a.pass([&]<class A>(A&& x) {                                                               \
      return detail::make_expr<binary::op>(a.site(), std::forward<A>(x), std::forward<B>(b));         \
    });                                                                                               \
  }                                                                                                   \
  template <class A>                                                                                  \
    requires(bool(scalar_like<A>))                                                                    \
  friend auto operator sym(A&& a, Operand b) {                                                        \
    return b.pass([&]<class B>(B&& x) {                                                               \
      return detail::make_expr<binary::op>(b.site(), std::forward<A>(a), std::forward<B>(x));         \
    });                                                                                               \
  }
  LT_OPERATOR(+, add)
  LT_OPERATOR(-, sub)
  LT_OPERATOR(*, mul)
  LT_OPERATOR(/, div)
  LT_OPERATOR(==, eq)
  LT_OPERATOR(!=, ne)
  LT_OPERATOR(<, lt)
  LT_OPERATOR(<=, le)
  LT_OPERATOR(>, gt)
  LT_OPERATOR(>=, ge)
#undef LT_OPERATOR
  friend auto operator-(Operand x) {
    return x.pass([&]<class X>(X&& v) { return detail::make_expr<unary::neg>(x.site(), std::forward<X>(v)); });
  }
  friend auto operator!(Operand x) {
    return x.pass([&]<class X>(X&& v) { return detail::make_expr<unary::logical_not>(x.site(), std::forward<X>(v)); });
  }

  // In-place forms rebind the handle, as PyTorch's `a += b` (tensors only).
#define LT_COMPOUND(sym, op)                                                   \
  template <class B>                                                           \
    requires elementwise_operand<B> && std::is_same_v<Derived, Tensor>         \
  friend Derived& operator sym(Target a, B&& b) {                              \
    a.x.assign(detail::make_expr<binary::op>(a.site, a.x, std::forward<B>(b))); \
    return a.x;                                                                \
  }
  LT_COMPOUND(+=, add)
  LT_COMPOUND(-=, sub)
  LT_COMPOUND(*=, mul)
  LT_COMPOUND(/=, div)
#undef LT_COMPOUND
};

}  // namespace lt

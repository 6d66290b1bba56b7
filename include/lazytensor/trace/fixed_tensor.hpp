#pragma once
// lt::FixedTensor<64, 784>: a tensor whose extents are part of its type. Its ops check shapes
// when the program compiles (expr/static_shape.hpp) and give results whose extents are known
// too, so a mis-wired model does not build. It is an lt::Tensor underneath: it converts to
// `const Tensor&` without a copy, and elementwise ops on it stay fused expressions.
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "lazytensor/expr/static_shape.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/trace/functions/contraction.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"
#include "lazytensor/trace/functions/movement.hpp"
#include "lazytensor/trace/functions/nn.hpp"
#include "lazytensor/trace/functions/reduction.hpp"

namespace lt {

template <class Ext, class Value = Tensor> class Fixed;
template <class X> inline constexpr bool is_fixed_v = false;
template <class E, class V> inline constexpr bool is_fixed_v<Fixed<E, V>> = true;
template <class X> concept fixed = is_fixed_v<std::remove_cvref_t<X>>;
/// A tensor of static extents E...; its dtype and device are dynamic.
template <std::int64_t... E> using FixedTensor = Fixed<extents<E...>, Tensor>;

namespace detail {
struct TrustedShape {};  // the extents follow from the operands' static extents
template <class Ext> Shape shape_of() { return Shape(std::span<const std::int64_t>(Ext::dims)); }
}  // namespace detail

/// A value (a Tensor, or an expression not yet recorded) with static extents Ext.
template <class Ext, class Value>
class Fixed {
  static_assert(static_shape::is_extents<Ext>, "lt::Fixed: the first argument must be lt::extents<...>");

 public:
  /// The static extents, an lt::extents<...>.
  using extents_type = Ext;
  /// The extents as a Shape.
  static Shape shape() { return detail::shape_of<Ext>(); }
  /// The rank, known when the program compiles.
  static constexpr int dim() { return static_cast<int>(Ext::rank); }

  Fixed() = default;
  /// Checks the tensor's shape against Ext: lt::Error when it differs.
  explicit Fixed(Tensor t)
    requires std::is_same_v<Value, Tensor>
      : value_(std::move(t)) {
    LT_CHECK(value_.defined() && value_.shape() == shape(), "FixedTensor", shape(), ": got ",
             value_.defined() ? describe(value_) : std::string("an undefined tensor"));
  }
  /// Records an expression of the same extents.
  template <class V>
    requires(std::is_same_v<Value, Tensor> && !std::is_same_v<V, Tensor>)
  Fixed(const Fixed<Ext, V>& e)  // NOLINT: implicit, as Expr to Tensor
      : value_(e.value()) {}
  /// Wraps a value whose shape follows from static extents; for the library's own ops, which checked it when
  /// the program compiled.
  Fixed(detail::TrustedShape, Value v) : value_(std::move(v)) {}

  /// The value: a Tensor, or an expression not yet recorded.
  const Value& value() const { return value_; }
  /// The element type (dynamic).
  DType dtype() const { return value_.dtype(); }
  /// The device (dynamic).
  Device device() const { return value_.device(); }

  /// The tensor itself, without a copy: a FixedTensor goes wherever a const Tensor& does.
  operator const Tensor&() const  // NOLINT: a FixedTensor is usable wherever a Tensor is
    requires std::is_same_v<Value, Tensor>
  {
    return value_;
  }
  /// Records the expression and returns the Tensor.
  operator Tensor() const  // NOLINT
    requires(!std::is_same_v<Value, Tensor>)
  {
    return value_;
  }
  /// The tensor itself.
  const Tensor& tensor() const
    requires std::is_same_v<Value, Tensor>
  {
    return value_;
  }

 private:
  /// An operator's operand, with the operator's line (as ElementwiseMethods' Operand).
  struct Operand {
    Operand(const Fixed& x, Site site = Site::current()) : x(x), site(site) {}  // NOLINT: implicit on purpose
    const Fixed& x;
    Site site;
  };

 public:
  // The operators, as friends: add, sub, mul and div (below) at the operator's line.
#define LT_FIXED_OPERATOR(sym, fn)                                   \
  template <class B>                                                 \
    requires(fixed<B> || scalar_like<B>)                             \
  friend auto operator sym(Operand a, const B& b) {                  \
    return fn(a.x, b, a.site);                                       \
  }                                                                  \
  template <class A>                                                 \
    requires scalar_like<A>                                          \
  friend auto operator sym(const A& a, Operand b) {                  \
    return fn(a, b.x, b.site);                                       \
  }
  LT_FIXED_OPERATOR(+, add)
  LT_FIXED_OPERATOR(-, sub)
  LT_FIXED_OPERATOR(*, mul)
  LT_FIXED_OPERATOR(/, div)
#undef LT_FIXED_OPERATOR
  /// -x, of the same static shape.
  friend auto operator-(Operand x) { return neg(x.x, x.site); }

 private:
  Value value_;
};

namespace detail {
template <class Ext, class V> Fixed<Ext, std::remove_cvref_t<V>> make_fixed(V&& v) {
  return {TrustedShape{}, std::forward<V>(v)};
}
template <class X> decltype(auto) unwrap(const X& x) {
  if constexpr (fixed<X>) return x.value();
  else return x;
}
template <class X> struct extents_of {
  using type = extents<>;  // a C++ scalar
};
template <class E, class V> struct extents_of<Fixed<E, V>> {
  using type = E;
};
template <class X> using extents_of_t = typename extents_of<std::remove_cvref_t<X>>::type;
template <class X> inline constexpr bool fixed_operand = fixed<X> || scalar_like<X>;
}  // namespace detail

// Elementwise: the result's extents are the operands' broadcast; the value stays an expression.
// Each takes its caller's line, as the functions on tensors do (core/site.hpp).
#define LT_FIXED_BINARY(fn, op, desc)                                                                         \
  template <class A, class B>                                                                                 \
    requires((fixed<A> || fixed<B>) && detail::fixed_operand<A> && detail::fixed_operand<B>)                \
  auto fn(const A& a, const B& b, Site site = Site::current()) {                                              \
    using R = typename static_shape::elementwise<desc, detail::extents_of_t<A>, detail::extents_of_t<B>>::type; \
    return detail::make_fixed<R>(op(detail::unwrap(a), detail::unwrap(b), site));                            \
  }
#define LT_FIXED_TABLE_BINARY(op, ...) LT_FIXED_BINARY(op, lt::op, binary::op)
LT_BINARY_TABLE(LT_FIXED_TABLE_BINARY)
#undef LT_FIXED_TABLE_BINARY
#undef LT_FIXED_BINARY

#define LT_FIXED_UNARY(fn)                                                 \
  template <class E, class V>                                              \
  auto fn(const Fixed<E, V>& x, Site site = Site::current()) {             \
    return detail::make_fixed<E>(lt::fn(x.value(), site));                 \
  }
#define LT_FIXED_UNARY_plain(fn) LT_FIXED_UNARY(fn)
#define LT_FIXED_UNARY_custom(fn)
#define LT_FIXED_TABLE_UNARY(fn, number, Fn, Rule, face, ...) LT_FIXED_UNARY_##face(fn)
LT_UNARY_TABLE(LT_FIXED_TABLE_UNARY)
#undef LT_FIXED_TABLE_UNARY
#undef LT_FIXED_UNARY_plain
#undef LT_FIXED_UNARY_custom
#undef LT_FIXED_UNARY
template <class E, class V>
auto gelu(const Fixed<E, V>& x, std::string_view approximate = "none", Site site = Site::current()) {
  return detail::make_fixed<E>(lt::gelu(x.value(), approximate, site));
}

/// torch.matmul's rule, checked at compile time.
template <class A, class VA, class B, class VB>
auto matmul(const Fixed<A, VA>& a, const Fixed<B, VB>& b, Site site = Site::current()) {
  RecordingSite at(site);
  using R = typename static_shape::matmul<A, B>::type;
  return detail::make_fixed<R>(lt::matmul(Tensor(a.value()), Tensor(b.value())));
}

template <class X, class VX, class W>
auto linear(const Fixed<X, VX>& x, const Fixed<W, Tensor>& weight, Site site = Site::current()) {
  RecordingSite at(site);
  using R = typename static_shape::linear<X, W>::type;
  return detail::make_fixed<R>(lt::linear(Tensor(x.value()), weight.tensor()));
}
template <class X, class VX, class W, class B>
auto linear(const Fixed<X, VX>& x, const Fixed<W, Tensor>& weight, const Fixed<B, Tensor>& bias,
            Site site = Site::current()) {
  RecordingSite at(site);
  using R = typename static_shape::linear<X, W, B>::type;
  return detail::make_fixed<R>(lt::linear(Tensor(x.value()), weight.tensor(), bias.tensor()));
}

/// conv2d with square stride, padding and dilation given at compile time.
template <std::int64_t Stride = 1, std::int64_t Padding = 0, std::int64_t Dilation = 1, std::int64_t Groups = 1,
          class X, class VX, class W>
auto conv2d(const Fixed<X, VX>& x, const Fixed<W, Tensor>& weight, Site site = Site::current()) {
  RecordingSite at(site);
  using R = typename static_shape::conv2d<X, W, Stride, Padding, Dilation, Groups>::type;
  return detail::make_fixed<R>(lt::conv2d(Tensor(x.value()), weight.tensor(), std::nullopt, Stride, Padding, Dilation, Groups));
}
template <std::int64_t Stride = 1, std::int64_t Padding = 0, std::int64_t Dilation = 1, std::int64_t Groups = 1,
          class X, class VX, class W, class B>
auto conv2d(const Fixed<X, VX>& x, const Fixed<W, Tensor>& weight, const Fixed<B, Tensor>& bias,
            Site site = Site::current()) {
  RecordingSite at(site);
  using R = typename static_shape::conv2d<X, W, Stride, Padding, Dilation, Groups, B>::type;
  return detail::make_fixed<R>(lt::conv2d(Tensor(x.value()), weight.tensor(), bias.tensor(), Stride, Padding, Dilation, Groups));
}

// Reductions over one dim given at compile time: sum<1>(x), mean<-1, true>(x).
#define LT_FIXED_REDUCTION(fn)                                                  \
  template <std::int64_t Dim, bool Keepdim = false, class X, class VX>          \
  auto fn(const Fixed<X, VX>& x, Site site = Site::current()) {                  \
    RecordingSite at(site);                                                     \
    using R = typename static_shape::reduce<reduction::fn, X, Dim, Keepdim>::type; \
    return detail::make_fixed<R>(lt::fn(Tensor(x.value()), Dim, Keepdim));      \
  }
LT_FIXED_REDUCTION(sum)
LT_FIXED_REDUCTION(mean)
LT_FIXED_REDUCTION(amax)
LT_FIXED_REDUCTION(amin)
#undef LT_FIXED_REDUCTION

/// reshape<8, -1>(x): one extent may be -1.
template <std::int64_t... To, class X, class VX>
auto reshape(const Fixed<X, VX>& x, Site site = Site::current()) {
  RecordingSite at(site);
  using R = typename static_shape::reshape<X, extents<To...>>::type;
  return detail::make_fixed<R>(lt::reshape(Tensor(x.value()), detail::shape_of<R>()));
}

}  // namespace lt

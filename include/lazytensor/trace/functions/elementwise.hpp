#pragma once
// Elementwise functions and operators. They build expressions (trace/expression.hpp), which
// record one fused node when they become a Tensor. C++ scalars are operands too, weakest in
// type promotion (PyTorch's wrapped numbers).
#include <optional>

#include "lazytensor/ops/binary.hpp"
#include "lazytensor/ops/unary.hpp"
#include "lazytensor/trace/dispatch.hpp"
#include "lazytensor/trace/expression.hpp"

namespace lt {

#define LT_UNARY_FUNCTION(op) \
  template <tensor_like X>      \
  auto op(X&& x) {              \
    return detail::make_expr<unary::op>(std::forward<X>(x)); \
  }
LT_UNARY_FUNCTION(neg)
LT_UNARY_FUNCTION(abs)
LT_UNARY_FUNCTION(exp)
LT_UNARY_FUNCTION(log)
LT_UNARY_FUNCTION(log1p)
LT_UNARY_FUNCTION(expm1)
LT_UNARY_FUNCTION(sqrt)
LT_UNARY_FUNCTION(rsqrt)
LT_UNARY_FUNCTION(sin)
LT_UNARY_FUNCTION(cos)
LT_UNARY_FUNCTION(tanh)
LT_UNARY_FUNCTION(erf)
LT_UNARY_FUNCTION(sigmoid)
LT_UNARY_FUNCTION(relu)
LT_UNARY_FUNCTION(silu)
LT_UNARY_FUNCTION(sign)
LT_UNARY_FUNCTION(floor)
LT_UNARY_FUNCTION(ceil)
LT_UNARY_FUNCTION(round)
LT_UNARY_FUNCTION(reciprocal)
LT_UNARY_FUNCTION(logical_not)
LT_UNARY_FUNCTION(isnan)
LT_UNARY_FUNCTION(isinf)
#undef LT_UNARY_FUNCTION

/// approximate: "none" (the exact erf form) or "tanh".
template <tensor_like X>
auto gelu(X&& x, std::string_view approximate = "none") {
  if (approximate != "none" && approximate != "tanh") {
    Tensor t = x;
    op_error("gelu", std::span(&t, 1), detail::concat("approximate must be \"none\" or \"tanh\", not \"", approximate, "\""));
  }
  return detail::make_expr_with<unary::gelu>(Attrs{{approximate == "tanh" ? 1 : 0}, {}}, std::forward<X>(x));
}

template <tensor_like X>
auto softplus(X&& x, double beta = 1.0, double threshold = 20.0) {
  return detail::make_expr_with<unary::softplus>(Attrs{{}, {beta, threshold}}, std::forward<X>(x));
}

template <tensor_like X>
auto clamp(X&& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) {
  return detail::make_expr_with<unary::clamp>(detail::clamp_attrs(min, max), std::forward<X>(x));
}
template <tensor_like X> auto clamp_min(X&& x, Scalar min) { return clamp(std::forward<X>(x), min); }
template <tensor_like X> auto clamp_max(X&& x, Scalar max) { return clamp(std::forward<X>(x), std::nullopt, max); }

/// Operands of a binary elementwise op: tensors, expressions or C++ scalars, not only scalars.
template <class A, class B>
concept binary_operands = (tensor_like<A> || tensor_like<B>) && elementwise_operand<A> && elementwise_operand<B>;

#define LT_BINARY_FUNCTION(op)                                                 \
  template <class A, class B>                                                  \
    requires binary_operands<A, B>                                             \
  auto op(A&& a, B&& b) {                                                      \
    return detail::make_expr<binary::op>(std::forward<A>(a), std::forward<B>(b)); \
  }
LT_BINARY_FUNCTION(add)
LT_BINARY_FUNCTION(sub)
LT_BINARY_FUNCTION(mul)
LT_BINARY_FUNCTION(div)
LT_BINARY_FUNCTION(pow)
LT_BINARY_FUNCTION(maximum)
LT_BINARY_FUNCTION(minimum)
LT_BINARY_FUNCTION(fmod)
LT_BINARY_FUNCTION(atan2)
LT_BINARY_FUNCTION(eq)
LT_BINARY_FUNCTION(ne)
LT_BINARY_FUNCTION(lt)
LT_BINARY_FUNCTION(le)
LT_BINARY_FUNCTION(gt)
LT_BINARY_FUNCTION(ge)
LT_BINARY_FUNCTION(logical_and)
LT_BINARY_FUNCTION(logical_or)
#undef LT_BINARY_FUNCTION

template <tensor_like C, elementwise_operand A, elementwise_operand B>
auto where(C&& cond, A&& a, B&& b) {
  return detail::make_expr<binary::where>(std::forward<C>(cond), std::forward<A>(a), std::forward<B>(b));
}

#define LT_OPERATOR(sym, op)                                              \
  template <class A, class B>                                             \
    requires binary_operands<A, B>                                        \
  auto operator sym(A&& a, B&& b) {                                       \
    return detail::make_expr<binary::op>(std::forward<A>(a), std::forward<B>(b)); \
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
template <tensor_like X> auto operator-(X&& x) { return detail::make_expr<unary::neg>(std::forward<X>(x)); }
template <tensor_like X> auto operator!(X&& x) { return detail::make_expr<unary::logical_not>(std::forward<X>(x)); }

// In-place forms rebind the handle, as PyTorch's `a += b`.
template <elementwise_operand B> Tensor& operator+=(Tensor& a, B&& b) { a.assign(a + std::forward<B>(b)); return a; }
template <elementwise_operand B> Tensor& operator-=(Tensor& a, B&& b) { a.assign(a - std::forward<B>(b)); return a; }
template <elementwise_operand B> Tensor& operator*=(Tensor& a, B&& b) { a.assign(a * std::forward<B>(b)); return a; }
template <elementwise_operand B> Tensor& operator/=(Tensor& a, B&& b) { a.assign(a / std::forward<B>(b)); return a; }

inline void Tensor::assign(const Tensor& value) {
  TensorImpl& dst = impl();
  const TensorImpl& src = value.impl();
  LT_CHECK(dst.device == src.device && dst.meta.shape == src.meta.shape && dst.meta.dtype == src.meta.dtype,
           "assign: the value must match the tensor's shape, dtype and device (operands: ", describe(*this), ", ",
           describe(value), ")");
  if (dst.autograd || src.autograd)
    if (const GradHooks* hooks = detail::grad_hooks.load(std::memory_order_relaxed)) hooks->assign(dst, src);
  dst.node = src.node;
  dst.data = src.data;
  track_if_pending(dst);
}

/// The value converted to `dtype` (a no-op when it already has it).
inline Tensor Tensor::to(DType dtype) const {
  return record(leaf::cast, {*this}, Attrs{{static_cast<std::int64_t>(dtype)}, {}});
}

}  // namespace lt

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

// The plain unary ops of the op table, as functions: lt::exp(x).
#define LT_UNARY_FUNCTION_plain(op)                                \
  template <tensor_like X>                                         \
  auto op(X&& x, Site site = Site::current()) {                    \
    return detail::make_expr<unary::op>(site, std::forward<X>(x)); \
  }
#define LT_UNARY_FUNCTION_custom(op)
#define LT_UNARY_FUNCTION(op, number, Fn, Rule, face, ...) LT_UNARY_FUNCTION_##face(op)
LT_UNARY_TABLE(LT_UNARY_FUNCTION)
#undef LT_UNARY_FUNCTION
#undef LT_UNARY_FUNCTION_plain
#undef LT_UNARY_FUNCTION_custom

/// approximate: "none" (the exact erf form) or "tanh".
template <tensor_like X>
auto gelu(X&& x, std::string_view approximate = "none", Site site = Site::current()) {
  if (approximate != "none" && approximate != "tanh") {
    Tensor t = x;
    op_error("gelu", std::span(&t, 1), detail::concat("approximate must be \"none\" or \"tanh\", not \"", approximate, "\""));
  }
  return detail::make_expr_with<unary::gelu>(encode(GeluAttrs{approximate == "tanh"}), site, std::forward<X>(x));
}

template <class Derived>
auto ElementwiseMethods<Derived>::gelu(std::string_view approximate, Site site) const {
  return lt::gelu(self(), approximate, site);
}

template <tensor_like X>
auto softplus(X&& x, double beta = 1.0, double threshold = 20.0, Site site = Site::current()) {
  return detail::make_expr_with<unary::softplus>(encode(SoftplusAttrs{beta, threshold}), site, std::forward<X>(x));
}

template <tensor_like X>
auto clamp(X&& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt, Site site = Site::current()) {
  return detail::make_expr_with<unary::clamp>(detail::clamp_attrs(min, max), site, std::forward<X>(x));
}
template <tensor_like X> auto clamp_min(X&& x, Scalar min, Site site = Site::current()) {
  return clamp(std::forward<X>(x), min, std::nullopt, site);
}
template <tensor_like X> auto clamp_max(X&& x, Scalar max, Site site = Site::current()) {
  return clamp(std::forward<X>(x), std::nullopt, max, site);
}

/// `x` unchanged, as a node that checks it: a NaN or an infinity in it is a fault of the step,
/// raised as lt::Error at the next barrier or read on a lazy device (at once on the eager one),
/// like an index out of range. Checking reads nothing back, so the step stays one graph.
/// Floating operands only.
template <tensor_like X>
auto check_finite(X&& x, Site site = Site::current()) {
  return detail::make_expr_with<unary::check_finite>(encode(CheckFiniteAttrs{FiniteGuard::value, 0.0}), site,
                                                     std::forward<X>(x));
}

namespace detail {
/// check_finite whose fault names clip_grad_norm_'s total norm of order `order`.
template <tensor_like X>
auto check_finite_grad_norm(X&& norm, double order, Site site = Site::current()) {
  return make_expr_with<unary::check_finite>(encode(CheckFiniteAttrs{FiniteGuard::grad_norm, order}), site,
                                             std::forward<X>(norm));
}
}  // namespace detail

/// Operands of a binary elementwise op: tensors, expressions or C++ scalars, not only scalars.
template <class A, class B>
concept binary_operands = (tensor_like<A> || tensor_like<B>) && elementwise_operand<A> && elementwise_operand<B>;

// The binary ops of the op table, as functions: lt::add(a, b).
#define LT_BINARY_FUNCTION(op, ...)                                                     \
  template <class A, class B>                                                           \
    requires binary_operands<A, B>                                                      \
  auto op(A&& a, B&& b, Site site = Site::current()) {                                  \
    return detail::make_expr<binary::op>(site, std::forward<A>(a), std::forward<B>(b)); \
  }
LT_BINARY_TABLE(LT_BINARY_FUNCTION)
#undef LT_BINARY_FUNCTION

template <tensor_like C, elementwise_operand A, elementwise_operand B>
auto where(C&& cond, A&& a, B&& b, Site site = Site::current()) {
  return detail::make_expr<binary::where>(site, std::forward<C>(cond), std::forward<A>(a), std::forward<B>(b));
}

// The operators (+, -, *, /, comparisons, unary - and !, and the in-place forms) are friends of
// the operand types: trace/elementwise_methods.hpp.

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
inline Tensor Tensor::to(DType dtype, Site site) const {
  RecordingSite at(site);
  return detail::record_cast(*this, dtype);
}

}  // namespace lt

#pragma once
// add and sub with PyTorch's `alpha`: a + alpha * b and a - alpha * b, as functions and as
// methods of tensors and expressions. Without alpha they are the op table's add and sub
// (trace/functions/elementwise.hpp).
#include <string_view>

#include "lazytensor/trace/functions/elementwise.hpp"

namespace lt {

namespace detail {
/// PyTorch's check of `alpha` against the result dtype: a floating alpha only for floating
/// results, a bool alpha only for bool results.
inline void check_alpha(std::string_view op, DType result, Scalar alpha) {
  if (alpha.dtype == DType::f64 && !is_floating(result))
    fail(op, ": alpha must not be a floating point number for a result of dtype ", name(result), " (alpha ", alpha.f, ")");
  if (alpha.dtype == DType::boolean && result != DType::boolean)
    fail(op, ": a bool alpha is only supported for bool results, not ", name(result));
}

/// b * alpha in `result`'s dtype: a tensor operand is converted first, as PyTorch computes
/// alpha * b in the result type; a C++ scalar operand is multiplied in C++.
template <class B>
auto scaled(B&& b, DType result, Scalar alpha) {
  if constexpr (scalar_like<B>) {
    Scalar s(b);
    if (result == DType::boolean) return Scalar(s.i != 0 && (alpha.dtype == DType::f64 ? alpha.f != 0 : alpha.i != 0));
    if (s.dtype == DType::f64 || alpha.dtype == DType::f64) return Scalar(s.as<double>() * alpha.as<double>());
    return Scalar(static_cast<std::int64_t>(static_cast<std::uint64_t>(s.i) * static_cast<std::uint64_t>(alpha.i)));
  } else {
    Tensor t = std::forward<B>(b);
    if (t.dtype() != result) t = t.to(result);
    if (result == DType::boolean)  // alpha converted to bool, as PyTorch does for bool results
      return Tensor(t * (alpha.dtype == DType::f64 ? alpha.f != 0 : alpha.i != 0));
    return Tensor(t * alpha);
  }
}

/// a op alpha * b, op add or sub; alpha 1 is the plain op. Every op it records names `site`.
template <const auto& Op, class A, class B>
Tensor with_alpha(std::string_view name, A&& a, B&& b, Scalar alpha, const Site& site) {
  RecordingSite at(site);
  auto plain = make_expr<Op>(site, a, b);  // checks shapes, dtypes and devices, records nothing
  const DType result = plain.dtype();
  check_alpha(name, result, alpha);
  if (alpha.dtype != DType::boolean && alpha.f == 1 && alpha.i == 1) return plain;
  return make_expr<Op>(site, std::forward<A>(a), scaled(std::forward<B>(b), result, alpha));
}
}  // namespace detail

/// a + alpha * b (torch.add with alpha), in the dtype a + b has. A floating alpha needs a
/// floating result, as in PyTorch.
template <class A, class B>
  requires binary_operands<A, B>
Tensor add(A&& a, B&& b, Scalar alpha, Site site = Site::current()) {
  return detail::with_alpha<binary::add>("add", std::forward<A>(a), std::forward<B>(b), alpha, site);
}
/// a - alpha * b (torch.sub with alpha).
template <class A, class B>
  requires binary_operands<A, B>
Tensor sub(A&& a, B&& b, Scalar alpha, Site site = Site::current()) {
  return detail::with_alpha<binary::sub>("sub", std::forward<A>(a), std::forward<B>(b), alpha, site);
}

template <class Derived>
template <class X>
Tensor ElementwiseMethods<Derived>::add(const X& other, Scalar alpha, Site site) const {
  return lt::add(self(), other, alpha, site);
}
template <class Derived>
template <class X>
Tensor ElementwiseMethods<Derived>::sub(const X& other, Scalar alpha, Site site) const {
  return lt::sub(self(), other, alpha, site);
}

}  // namespace lt

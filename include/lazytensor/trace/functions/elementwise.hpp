#pragma once
// Elementwise functions and operators. C++ scalars become zero-dim operands on the tensor's
// device, weakest in type promotion (PyTorch's wrapped numbers).
#include <optional>

#include "lazytensor/ops/binary.hpp"
#include "lazytensor/ops/unary.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

#define LT_UNARY_FUNCTION(op) \
  inline Tensor op(const Tensor& x) { return record(unary::op, {x}); }
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
inline Tensor gelu(const Tensor& x, std::string_view approximate = "none") {
  if (approximate != "none" && approximate != "tanh")
    op_error("gelu", std::span(&x, 1),
             detail::concat("approximate must be \"none\" or \"tanh\", not \"", approximate, "\""));
  return record(unary::gelu, {x}, Attrs{{approximate == "tanh" ? 1 : 0}, {}});
}

inline Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0) {
  return record(unary::softplus, {x}, Attrs{{}, {beta, threshold}});
}

inline Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) {
  bool floating = (min && min->dtype == DType::f64) || (max && max->dtype == DType::f64);
  return record(unary::clamp, {x},
                Attrs{{min.has_value(), max.has_value(), floating}, {min ? min->f : 0.0, max ? max->f : 0.0}});
}
inline Tensor clamp_min(const Tensor& x, Scalar min) { return clamp(x, min); }
inline Tensor clamp_max(const Tensor& x, Scalar max) { return clamp(x, std::nullopt, max); }

namespace detail {
/// The device a scalar operand joins. An undefined tensor gets the eager device, so that
/// record reports it naming the op.
inline Device scalar_device(const Tensor& t) { return t.defined() ? t.device() : cpu; }
}  // namespace detail

#define LT_BINARY_FUNCTION(op)                                                                              \
  inline Tensor op(const Tensor& a, const Tensor& b) { return record(binary::op, {a, b}); }                 \
  inline Tensor op(const Tensor& a, Scalar b) { return op(a, scalar_tensor(b, detail::scalar_device(a))); } \
  inline Tensor op(Scalar a, const Tensor& b) { return op(scalar_tensor(a, detail::scalar_device(b)), b); }
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

inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) { return record(binary::where, {cond, a, b}); }
inline Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  return where(cond, a, scalar_tensor(b, detail::scalar_device(cond)));
}
inline Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  return where(cond, scalar_tensor(a, detail::scalar_device(cond)), b);
}

#define LT_OPERATOR(sym, op)                                                       \
  inline Tensor operator sym(const Tensor& a, const Tensor& b) { return op(a, b); } \
  inline Tensor operator sym(const Tensor& a, Scalar b) { return op(a, b); }        \
  inline Tensor operator sym(Scalar a, const Tensor& b) { return op(a, b); }
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
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator!(const Tensor& x) { return logical_not(x); }

// In-place forms rebind the handle, as PyTorch's `a += b`.
inline Tensor& operator+=(Tensor& a, const Tensor& b) { a.assign(a + b); return a; }
inline Tensor& operator-=(Tensor& a, const Tensor& b) { a.assign(a - b); return a; }
inline Tensor& operator*=(Tensor& a, const Tensor& b) { a.assign(a * b); return a; }
inline Tensor& operator/=(Tensor& a, const Tensor& b) { a.assign(a / b); return a; }
inline Tensor& operator+=(Tensor& a, Scalar b) { a.assign(a + b); return a; }
inline Tensor& operator-=(Tensor& a, Scalar b) { a.assign(a - b); return a; }
inline Tensor& operator*=(Tensor& a, Scalar b) { a.assign(a * b); return a; }
inline Tensor& operator/=(Tensor& a, Scalar b) { a.assign(a / b); return a; }

inline Tensor Tensor::neg() const { return lt::neg(*this); }
inline Tensor Tensor::abs() const { return lt::abs(*this); }
inline Tensor Tensor::exp() const { return lt::exp(*this); }
inline Tensor Tensor::log() const { return lt::log(*this); }
inline Tensor Tensor::sqrt() const { return lt::sqrt(*this); }
inline Tensor Tensor::rsqrt() const { return lt::rsqrt(*this); }
inline Tensor Tensor::sin() const { return lt::sin(*this); }
inline Tensor Tensor::cos() const { return lt::cos(*this); }
inline Tensor Tensor::tanh() const { return lt::tanh(*this); }
inline Tensor Tensor::sigmoid() const { return lt::sigmoid(*this); }
inline Tensor Tensor::relu() const { return lt::relu(*this); }
inline Tensor Tensor::reciprocal() const { return lt::reciprocal(*this); }
inline Tensor Tensor::sign() const { return lt::sign(*this); }
inline Tensor Tensor::floor() const { return lt::floor(*this); }
inline Tensor Tensor::ceil() const { return lt::ceil(*this); }
inline Tensor Tensor::round() const { return lt::round(*this); }
inline Tensor Tensor::logical_not() const { return lt::logical_not(*this); }
inline Tensor Tensor::isnan() const { return lt::isnan(*this); }
inline Tensor Tensor::isinf() const { return lt::isinf(*this); }
inline Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const { return lt::clamp(*this, min, max); }
inline Tensor Tensor::pow(const Tensor& e) const { return lt::pow(*this, e); }
inline Tensor Tensor::pow(Scalar e) const { return lt::pow(*this, e); }
inline Tensor Tensor::maximum(const Tensor& o) const { return lt::maximum(*this, o); }
inline Tensor Tensor::minimum(const Tensor& o) const { return lt::minimum(*this, o); }

inline void Tensor::assign(const Tensor& value) {
  TensorImpl& dst = impl();
  const TensorImpl& src = value.impl();
  LT_CHECK(dst.device == src.device && dst.meta.shape == src.meta.shape && dst.meta.dtype == src.meta.dtype,
           "assign: the value must match the tensor's shape, dtype and device (operands: ", describe(*this), ", ",
           describe(value), ")");
  dst.node = src.node;
  dst.data = src.data;
  if (dst.device.is_lazy() && dst.node && !dst.node->is_data()) lazy_context(dst.device.index).track(impl_);
}

/// The value converted to `dtype` (a no-op when it already has it).
inline Tensor Tensor::to(DType dtype) const {
  return record(leaf::cast, {*this}, Attrs{{static_cast<std::int64_t>(dtype)}, {}});
}

}  // namespace lt

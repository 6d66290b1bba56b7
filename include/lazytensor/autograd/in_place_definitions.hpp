#pragma once
// lt::Tensor's in-place arithmetic (declared in trace/tensor.hpp), defined once per program:
// included by the implementation (lazytensor/implementation.hpp), never by a file of its own.
// They follow PyTorch's rules for in-place ops; the update itself is Tensor::assign's.
#include <string_view>

#include "lazytensor/autograd/grad_mode.hpp"
#include "lazytensor/trace/functions/arithmetic.hpp"

namespace lt {

namespace detail {
/// Makes `value()` the new value of `self`, as in-place op `op` with operand `other`. Checked
/// before anything is recorded: a leaf that requires grad refuses outside no_grad (its
/// gradient would no longer reach it). Then the result must have self's shape (self is not
/// broadcast) and a dtype that casts to self's; it is converted to that dtype.
/// Every op it records names `site`.
template <class Operand, class F>
Tensor& update_in_place(std::string_view op, Tensor& self, const Operand& other, const Site& site, F&& value) {
  RecordingSite at(site);
  auto operands = [&] {
    if constexpr (std::is_same_v<Operand, Tensor>) return concat(describe(self), ", ", describe(other));
    else return concat(describe(self), ", ", other.dtype == DType::f64 ? concat(other.f) : concat(other.i));
  };
  if (!self.defined()) fail(op, ": the tensor is undefined");
  if (is_grad_enabled() && self.requires_grad() && self.is_leaf())
    fail(op, ": a leaf that requires grad cannot be updated in place; update it inside lt::no_grad (operands: ",
         operands(), ")");
  Tensor result = value();
  if (result.shape() != self.shape())
    fail(op, ": the result's shape ", result.shape().str(), " is not the tensor's ", self.shape().str(),
         ": an in-place op does not broadcast the tensor (operands: ", operands(), ")");
  if (result.dtype() != self.dtype()) {
    if (!can_cast(result.dtype(), self.dtype()))
      fail(op, ": the result's dtype ", name(result.dtype()), " cannot be cast to the tensor's ", name(self.dtype()),
           " (operands: ", operands(), ")");
    result = result.to(self.dtype());
  }
  self.assign(result);
  return self;
}
}  // namespace detail

Tensor& Tensor::add_(const Tensor& other, Scalar alpha, Site site) {
  return detail::update_in_place("add_", *this, other, site, [&] { return lt::add(*this, other, alpha, site); });
}
Tensor& Tensor::add_(Scalar other, Scalar alpha, Site site) {
  return detail::update_in_place("add_", *this, other, site, [&] { return lt::add(*this, other, alpha, site); });
}
Tensor& Tensor::sub_(const Tensor& other, Scalar alpha, Site site) {
  return detail::update_in_place("sub_", *this, other, site, [&] { return lt::sub(*this, other, alpha, site); });
}
Tensor& Tensor::sub_(Scalar other, Scalar alpha, Site site) {
  return detail::update_in_place("sub_", *this, other, site, [&] { return lt::sub(*this, other, alpha, site); });
}
Tensor& Tensor::mul_(const Tensor& other, Site site) {
  return detail::update_in_place("mul_", *this, other, site, [&] { return Tensor(*this * other); });
}
Tensor& Tensor::mul_(Scalar other, Site site) {
  return detail::update_in_place("mul_", *this, other, site, [&] { return Tensor(*this * other); });
}
Tensor& Tensor::div_(const Tensor& other, Site site) {
  return detail::update_in_place("div_", *this, other, site, [&] { return Tensor(*this / other); });
}
Tensor& Tensor::div_(Scalar other, Site site) {
  return detail::update_in_place("div_", *this, other, site, [&] { return Tensor(*this / other); });
}

}  // namespace lt

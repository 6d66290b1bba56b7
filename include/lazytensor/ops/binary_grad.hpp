#pragma once
// Gradient rules of the binary and ternary elementwise ops. Broadcasting in the forward pass
// means summing to each operand's shape in the backward one.
#include "lazytensor/ops/grad.hpp"

namespace lt::grad::rule {

/// Sets the gradients of a binary op's operands a and b from the broadcast forms ga and gb,
/// computing only the ones wanted.
template <class Ga, class Gb>
void set_binary(GradContext& c, Ga&& ga, Gb&& gb) {
  if (c.needs_grad(0)) c.set(0, sum_to(ga(), c.input(0).shape()));
  if (c.needs_grad(1)) c.set(1, sum_to(gb(), c.input(1).shape()));
}

/// A binary op's gradient rule written in its op table line: the gradients of a and b from
/// a, b, the output y and its gradient g, e.g. `LT_GRAD_AB(g * b, g * a)`.
#define LT_GRAD_AB(ga, gb)                                                                                   \
  [](::lt::GradContext& c) {                                                                               \
    [[maybe_unused]] const ::lt::GradValue &a = c.input(0), &b = c.input(1), &y = c.output, &g = c.grad;   \
    ::lt::grad::rule::set_binary(c, [&] { return ga; }, [&] { return gb; });                               \
  }

// a, b: the operands, y: the output, g: the output's gradient.
#define LT_BINARY_RULE(op, ga, gb)                                                                        \
  inline void op(GradContext& c) {                                                                        \
    [[maybe_unused]] const GradValue &a = c.input(0), &b = c.input(1), &y = c.output, &g = c.grad;        \
    set_binary(c, [&] { return ga; }, [&] { return gb; });                                                \
  }
LT_BINARY_RULE(add, g, g)
LT_BINARY_RULE(sub, g, -g)
LT_BINARY_RULE(mul, g * b, g * a)
LT_BINARY_RULE(div, g / b, -(g * a) / (b * b))
LT_BINARY_RULE(atan2, g * b / (a * a + b * b), -(g * a) / (a * a + b * b))
// Ties share the gradient equally, as PyTorch's maximum and minimum.
LT_BINARY_RULE(maximum, grad::where(grad::gt(a, b), g, grad::where(grad::eq(a, b), g * 0.5, 0.0)),
               grad::where(grad::gt(b, a), g, grad::where(grad::eq(a, b), g * 0.5, 0.0)))
LT_BINARY_RULE(minimum, grad::where(grad::lt(a, b), g, grad::where(grad::eq(a, b), g * 0.5, 0.0)),
               grad::where(grad::lt(b, a), g, grad::where(grad::eq(a, b), g * 0.5, 0.0)))
// fmod(a, b) = a - trunc(a / b) * b.
LT_BINARY_RULE(fmod, g, -(g * [&] {
                 GradValue q = a / b;
                 return grad::where(grad::ge(q, 0.0), grad::floor(q), grad::ceil(q));
               }()))
// As PyTorch: no gradient from a zero exponent, and none to the exponent where the base is 0
// and the exponent non-negative (0^b is flat there, log(0) would give NaN).
LT_BINARY_RULE(pow, grad::where(grad::eq(b, 0.0), 0.0, g * b * grad::pow(a, b - 1.0)),
               grad::where(grad::logical_and(grad::eq(a, 0.0), grad::ge(b, 0.0)), 0.0, g * y * grad::log(a)))
#undef LT_BINARY_RULE

/// where(cond, a, b): the condition is bool and takes no gradient.
inline void where(GradContext& c) {
  const GradValue &cond = c.input(0), &g = c.grad;
  if (c.needs_grad(1)) c.set(1, sum_to(grad::where(cond, g, 0.0), c.input(1).shape()));
  if (c.needs_grad(2)) c.set(2, sum_to(grad::where(cond, 0.0, g), c.input(2).shape()));
}

}  // namespace lt::grad::rule

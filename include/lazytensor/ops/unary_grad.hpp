#pragma once
// Gradient rules of the unary elementwise ops (PyTorch's derivatives.yaml formulas).
#include <numbers>

#include "lazytensor/ops/grad.hpp"

namespace lt::grad::rule {

/// A unary op's gradient rule written in its op table line: the input's gradient from the
/// input x, the output y and its gradient g, e.g. `LT_GRAD_X(g * y)`.
#define LT_GRAD_X(formula)                                                                     \
  [](::lt::GradContext& c) {                                                                 \
    [[maybe_unused]] const ::lt::GradValue &x = c.input(0), &y = c.output, &g = c.grad;      \
    c.set(0, formula);                                                                       \
  }

// x: the input, y: the output, g: the output's gradient.
#define LT_UNARY_RULE(op, formula)                                                 \
  inline void op(GradContext& c) {                                                 \
    [[maybe_unused]] const GradValue &x = c.input(0), &y = c.output, &g = c.grad;  \
    c.set(0, formula);                                                             \
  }
LT_UNARY_RULE(neg, -g)
LT_UNARY_RULE(abs, g * grad::sign(x))
LT_UNARY_RULE(exp, g * y)
LT_UNARY_RULE(log, g / x)
LT_UNARY_RULE(log1p, g / (x + 1.0))
LT_UNARY_RULE(expm1, g * (y + 1.0))
LT_UNARY_RULE(sqrt, g / (y * 2.0))
LT_UNARY_RULE(rsqrt, g * y * y * y * -0.5)
LT_UNARY_RULE(sin, g * grad::cos(x))
LT_UNARY_RULE(cos, -(g * grad::sin(x)))
LT_UNARY_RULE(tanh, g * (1.0 - y * y))
LT_UNARY_RULE(erf, g * grad::exp(-(x * x)) * (2 / std::sqrt(std::numbers::pi)))
LT_UNARY_RULE(sigmoid, g * y * (1.0 - y))
LT_UNARY_RULE(reciprocal, -(g * y * y))
LT_UNARY_RULE(relu, grad::where(grad::gt(y, 0.0), g, 0.0))
// Piecewise constant: the derivative is zero wherever it exists.
LT_UNARY_RULE(sign, grad::zeros_like(x))
LT_UNARY_RULE(floor, grad::zeros_like(x))
LT_UNARY_RULE(ceil, grad::zeros_like(x))
LT_UNARY_RULE(round, grad::zeros_like(x))
#undef LT_UNARY_RULE

inline void silu(GradContext& c) {
  GradValue s = grad::sigmoid(c.input(0));
  c.set(0, c.grad * s * (1.0 + c.input(0) * (1.0 - s)));
}

inline void gelu(GradContext& c) {
  const GradValue &x = c.input(0), &g = c.grad;
  if (decode_or_default<GeluAttrs>(c.attrs).tanh_form) {
    const double beta = std::sqrt(2 / std::numbers::pi), kappa = 0.044715;
    GradValue x2 = x * x;
    GradValue t = grad::tanh((x + x2 * x * kappa) * beta);
    GradValue left = (1.0 + t) * 0.5;
    GradValue right = x * 0.5 * (1.0 - t * t) * ((1.0 + x2 * (3 * kappa)) * beta);
    return c.set(0, g * (left + right));
  }
  GradValue cdf = (1.0 + grad::erf(x * std::numbers::sqrt2 * 0.5)) * 0.5;
  GradValue pdf = grad::exp(x * x * -0.5) * (1 / std::sqrt(2 * std::numbers::pi));
  c.set(0, g * (cdf + x * pdf));
}

/// Linear above the threshold, as the forward.
inline void softplus(GradContext& c) {
  const auto [beta, threshold] = decode_or_default<SoftplusAttrs>(c.attrs);
  GradValue bx = c.input(0) * beta;
  c.set(0, grad::where(grad::gt(bx, threshold), c.grad, c.grad * grad::sigmoid(bx)));
}

/// The gradient passes where the input lies within the bounds (bounds included), as PyTorch's
/// clamp_backward.
inline void clamp(GradContext& c) {
  const GradValue& x = c.input(0);
  const auto a = decode<ClampAttrs>(c.attrs);
  GradValue inside;
  if (a.has_min) inside = grad::ge(x, a.min);
  if (a.has_max) {
    GradValue below = grad::le(x, a.max);
    inside = inside.defined() ? grad::logical_and(inside, below) : below;
  }
  c.set(0, grad::where(inside, c.grad, 0.0));
}

}  // namespace lt::grad::rule

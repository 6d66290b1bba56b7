#pragma once
// Gradient rules of the reductions (ReductionAttrs: no dims reduce every dim); the output's
// gradient is first broadcast back over the input (grad::unreduce).
#include <span>

#include "lazytensor/ops/grad.hpp"
#include "lazytensor/ops/op_attrs.hpp"

namespace lt::grad::rule {

inline AttrWords reduced(const GradContext& c) { return decode<ReductionAttrs>(c.attrs).dims; }
/// The output's gradient (or `v`, a value of the output's shape) over the input's shape.
inline GradValue spread(const GradContext& c, const GradValue& v) {
  return unreduce(v, c.input(0).shape(), reduced(c));
}
/// The number of input elements reduced into each output element.
inline double reduced_count(const GradContext& c) {
  std::int64_t out = c.output.shape().numel();
  return out == 0 ? 1.0 : static_cast<double>(c.input(0).shape().numel() / out);
}

inline void sum(GradContext& c) { c.set(0, spread(c, c.grad)); }
/// Divided before it is spread: one division per output element, not per input element.
inline void mean(GradContext& c) { c.set(0, spread(c, c.grad / reduced_count(c))); }
inline void logsumexp(GradContext& c) { c.set(0, spread(c, c.grad) * grad::exp(c.input(0) - spread(c, c.output))); }

/// Shared among the elements equal to the extreme, as PyTorch's amax and amin.
inline void extreme(GradContext& c) {
  const GradValue& x = c.input(0);
  GradValue hit = grad::eq(x, spread(c, c.output));
  GradValue count = spread(c, reduce(OpId::sum, cast(hit, x.dtype()), reduced(c), true));
  c.set(0, grad::where(hit, spread(c, c.grad) / count, 0.0));
}
inline void amax(GradContext& c) { extreme(c); }
inline void amin(GradContext& c) { extreme(c); }

/// The product of the other elements, exact with zeros: with none it is prod / x; with one,
/// only the zero element gets the product of the rest; with more, every gradient is zero.
inline void prod(GradContext& c) {
  const GradValue &x = c.input(0);
  GradValue zero = grad::eq(x, 0.0);
  GradValue zeros = spread(c, reduce(OpId::sum, cast(zero, x.dtype()), reduced(c), true));
  GradValue rest = spread(c, reduce(OpId::prod, grad::where(zero, 1.0, x), reduced(c), true));
  GradValue g = spread(c, c.grad);
  c.set(0, grad::where(grad::eq(zeros, 0.0), g * rest / x,
                       grad::where(grad::logical_and(grad::eq(zeros, 1.0), zero), g * rest, 0.0)));
}

/// The degrees of freedom, N - correction (at least 0).
inline double dof(const GradContext& c) {
  return std::max(0.0, reduced_count(c) - decode<ReductionAttrs>(c.attrs).correction.value_or(1));
}
/// x - mean(x) over the reduced dims.
inline GradValue centered(const GradContext& c) {
  const GradValue& x = c.input(0);
  return x - spread(c, reduce(OpId::mean, x, reduced(c), true));
}
/// d var = 2 (x - mean) / dof, as PyTorch: the factor scales the output's gradient before it is
/// spread, so the pass over x is one subtraction and one product.
inline void var(GradContext& c) { c.set(0, spread(c, c.grad * (2.0 / dof(c))) * centered(c)); }
/// std = sqrt(var): d std = d var / (2 std); no gradient where std is 0, as PyTorch.
inline void std_dev(GradContext& c) {
  GradValue zero = grad::eq(c.output, 0.0);
  GradValue factor = grad::where(zero, 0.0, c.grad / (c.output * dof(c)));
  c.set(0, spread(c, factor) * centered(c));
}

}  // namespace lt::grad::rule

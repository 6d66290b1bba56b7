#pragma once
// Gradient rules of the indexing ops: a gather's adjoint is a scatter_add into zeros, and the
// reverse. Indices are integers and take no gradient.
#include "lazytensor/ops/grad.hpp"

namespace lt::grad::rule {

/// Rows read more than once get the sum of their gradients.
inline void index_select(GradContext& c) {
  const GradValue &x = c.input(0), &index = c.input(1), &g = c.grad;
  if (x.dim() == 0) return c.set(0, g);
  const auto dim = static_cast<int>(decode<DimAttrs>(c.attrs).dim);
  Shape along = Shape::filled(x.dim(), 1);
  along[dim] = index.shape().numel();
  GradValue spread = grad::expand(grad::reshape(index, along), g.shape());
  c.set(0, grad::scatter_add(zeros(*g.builder, x.shape(), g.dtype()), dim, spread, g));
}

inline void gather(GradContext& c) {
  const GradValue &x = c.input(0), &g = c.grad;
  c.set(0, grad::scatter_add(zeros(*g.builder, x.shape(), g.dtype()), decode<DimAttrs>(c.attrs).dim, c.input(1), g));
}

/// Inputs: self, index, src. Elements of src beyond the index's extent were not read.
inline void scatter_add(GradContext& c) {
  const GradValue &index = c.input(1), &src = c.input(2), &g = c.grad;
  if (c.needs_grad(0)) c.set(0, g);
  if (!c.needs_grad(2)) return;
  GradValue read = grad::gather(g, decode<DimAttrs>(c.attrs).dim, index);
  std::vector<std::int64_t> pads;
  for (int d = src.dim() - 1; d >= 0; --d) pads.insert(pads.end(), {0, src.shape()[d] - index.shape()[d]});
  c.set(2, src.dim() == 0 ? read : grad::pad(read, pads));
}

}  // namespace lt::grad::rule

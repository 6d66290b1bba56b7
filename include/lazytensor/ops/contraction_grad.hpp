#pragma once
// Gradient rules of the contractions, themselves contractions: matmul's are products with a
// transposed operand; conv2d and its two gradient ops are each other's adjoints.
#include "lazytensor/ops/grad.hpp"
#include "lazytensor/ops/op_attrs.hpp"

namespace lt::grad::rule {

/// torch.matmul's rank rules: a vector operand is a one-row (left) or one-column (right)
/// matrix whose extra dim the result drops; batch dims broadcast, so their gradients sum.
inline void matmul(GradContext& c) {
  const GradValue &a = c.input(0), &b = c.input(1);
  auto as_matrix = [](const GradValue& v, bool left) {
    if (v.dim() != 1) return v;
    return grad::reshape(v, left ? Shape{1, v.shape()[0]} : Shape{v.shape()[0], 1});
  };
  GradValue am = as_matrix(a, true), bm = as_matrix(b, false);
  Shape full = c.grad.shape();  // the output with the dropped dims put back
  if (a.dim() == 1) full.insert(full.rank() - (b.dim() == 1 ? 0 : 1), 1);
  if (b.dim() == 1) full.push_back(1);
  GradValue g = grad::reshape(c.grad, full);
  if (c.needs_grad(0)) c.set(0, grad::reshape(sum_to(grad::matmul(g, transpose_last(bm)), am.shape()), a.shape()));
  if (!c.needs_grad(1)) return;
  const std::int64_t k = am.shape()[am.dim() - 1], n = g.shape()[g.dim() - 1];
  if (bm.dim() == 2 && am.dim() > 2 && k > 0 && n > 0 && !lt::detail::reproducible_sums) {
    // A matrix applied over batch dims (a Linear on [N, T, in]): its gradient is one product
    // with the batch folded into its rows, aᵀ [K, rows] times g [rows, N], not a product per
    // batch element and a sum over them. A reproducible replica keeps the per-element tree.
    GradValue rows_a = grad::reshape(am, Shape{am.shape().numel() / k, k});
    GradValue rows_g = grad::reshape(g, Shape{g.shape().numel() / n, n});
    c.set(1, grad::reshape(grad::matmul(transpose_last(rows_a), rows_g), b.shape()));
    return;
  }
  c.set(1, grad::reshape(sum_to(grad::matmul(transpose_last(am), g), bm.shape()), b.shape()));
}

/// conv2d's own attributes, from those of conv2d (c) or of one of its gradients.
inline Conv2dAttrs conv_of(const GradContext& c) {
  return c.op.id == OpId::conv2d ? decode<Conv2dAttrs>(c.attrs) : decode<Conv2dGradAttrs>(c.attrs).conv;
}
/// A gradient op's attributes: conv2d's and the input's H and W (input gradient) or the
/// kernel's KH and KW (weight gradient).
inline Attrs conv_attrs_with(const GradContext& c, std::int64_t h, std::int64_t w) {
  return encode(Conv2dGradAttrs{conv_of(c), h, w});
}
inline Attrs conv_attrs(const GradContext& c) { return encode(conv_of(c)); }

/// y = conv2d(x, w) is linear in each operand; its adjoints are the two gradient ops.
inline void conv2d(GradContext& c) {
  const GradValue &x = c.input(0), &w = c.input(1);
  if (c.needs_grad(0))
    c.set(0, apply(OpId::conv2d_input_grad, {c.grad, w}, conv_attrs_with(c, x.shape()[2], x.shape()[3])));
  if (c.needs_grad(1))
    c.set(1, apply(OpId::conv2d_weight_grad, {x, c.grad}, conv_attrs_with(c, w.shape()[2], w.shape()[3])));
}

/// dx = conv2d_input_grad(g, w) is linear in g (its adjoint is conv2d) and in w (its adjoint
/// correlates the incoming gradient with g: a weight gradient).
inline void conv2d_input_grad(GradContext& c) {
  const GradValue &g = c.input(0), &w = c.input(1);
  if (c.needs_grad(0)) c.set(0, apply(OpId::conv2d, {c.grad, w}, conv_attrs(c)));
  if (c.needs_grad(1))
    c.set(1, apply(OpId::conv2d_weight_grad, {c.grad, g}, conv_attrs_with(c, w.shape()[2], w.shape()[3])));
}

/// dw = conv2d_weight_grad(x, g) is linear in x (adjoint: an input gradient of g) and in g
/// (adjoint: conv2d of x with the incoming gradient).
inline void conv2d_weight_grad(GradContext& c) {
  const GradValue &x = c.input(0), &g = c.input(1);
  if (c.needs_grad(0))
    c.set(0, apply(OpId::conv2d_input_grad, {g, c.grad}, conv_attrs_with(c, x.shape()[2], x.shape()[3])));
  if (c.needs_grad(1)) c.set(1, apply(OpId::conv2d, {x, c.grad}, conv_attrs(c)));
}

}  // namespace lt::grad::rule

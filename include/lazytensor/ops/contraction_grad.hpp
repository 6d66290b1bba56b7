#pragma once
// Gradient rules of the contractions, themselves contractions: matmul's are products with a
// transposed operand, conv2d's are convolutions of the gradient (no transposed-convolution
// kernel is needed, and the backward graph is again made of table ops).
#include "lazytensor/ops/grad.hpp"

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
  if (c.needs_grad(1)) c.set(1, grad::reshape(sum_to(grad::matmul(transpose_last(am), g), bm.shape()), b.shape()));
}

/// attrs.ints: {stride h, w, padding h, w, dilation h, w, groups}; x [N, C, H, W],
/// w [O, C/groups, kH, kW], output and gradient [N, O, OH, OW].
inline void conv2d(GradContext& c) {
  const GradValue &x = c.input(0), &w = c.input(1), &g = c.grad;
  const std::vector<std::int64_t>& a = c.attrs.ints;
  const std::int64_t s[2] = {a[0], a[1]}, p[2] = {a[2], a[3]}, d[2] = {a[4], a[5]}, groups = a[6];
  const Shape &xs = x.shape(), &ws = w.shape(), &gs = g.shape();
  const std::int64_t n = xs[0], channels = xs[1], out_channels = ws[0];
  const std::int64_t cg = channels / groups, og = out_channels / groups;

  if (c.needs_grad(0)) {
    // The gradient spread by the stride (zeros between its elements), padded so that a stride-1
    // convolution with the flipped, per-group transposed kernel gives back [N, C, H, W].
    GradValue spread = g;
    if (s[0] > 1 || s[1] > 1) {
      spread = grad::reshape(g, Shape{n, out_channels, gs[2], 1, gs[3], 1});
      spread = grad::pad(spread, {0, s[1] - 1, 0, 0, 0, s[0] - 1});
      spread = grad::reshape(spread, Shape{n, out_channels, gs[2] * s[0], gs[3] * s[1]});
    }
    std::vector<std::int64_t> pads;
    for (int k : {1, 0}) {
      // Output row h reads spread rows h + p - reach .. h + p (reach: the kernel's span), so pad
      // by reach - p before and by whatever makes the length H + reach after (negative: crop).
      std::int64_t reach = d[k] * (ws[2 + k] - 1);
      pads.insert(pads.end(), {reach - p[k], xs[2 + k] + p[k] - spread.shape()[2 + k]});
    }
    spread = grad::pad(spread, pads);
    GradValue wt = grad::reshape(w, Shape{groups, og, cg, ws[2], ws[3]});
    wt = grad::permute(wt, {0, 2, 1, 3, 4});
    wt = grad::flip(grad::reshape(wt, Shape{channels, og, ws[2], ws[3]}), {2, 3});
    c.set(0, apply(OpId::conv2d, {spread, wt}, Attrs{{1, 1, 0, 0, d[0], d[1], groups}, {}}));
  }
  if (c.needs_grad(1)) {
    // Correlate the input with the gradient: per group, input channels become the batch and
    // the batch becomes channels; the forward stride is the dilation and the reverse.
    GradValue xt = grad::reshape(x, Shape{n, groups, cg, xs[2], xs[3]});
    xt = grad::reshape(grad::permute(xt, {2, 1, 0, 3, 4}), Shape{cg, groups * n, xs[2], xs[3]});
    GradValue gt = grad::permute(g, {1, 0, 2, 3});
    GradValue gw = apply(OpId::conv2d, {xt, gt}, Attrs{{d[0], d[1], p[0], p[1], s[0], s[1], groups}, {}});
    gw = grad::slice(grad::slice(gw, 2, 0, ws[2]), 3, 0, ws[3]);
    c.set(1, grad::permute(gw, {1, 0, 2, 3}));
  }
}

}  // namespace lt::grad::rule

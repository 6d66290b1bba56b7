#pragma once
// The gradient of fused attention, recomputing the weights p = softmax(q k^T * scale + mask)
// from its inputs rather than keeping them from the forward pass: with g the output's
// gradient, dv = p^T g, ds = p * (g v^T - rowsum(g v^T * p)), dq = ds k * scale,
// dk = ds^T q * scale, and the mask's gradient is ds summed to its shape.
#include "lazytensor/ops/grad.hpp"

namespace lt::grad::rule {

inline void attention(GradContext& c) {
  const GradValue &q = c.input(0), &k = c.input(1), &v = c.input(2);
  const bool masked = c.inputs.size() == 4;
  if (!c.grad.defined()) return;
  const double scale = decode<AttentionAttrs>(c.attrs).scale;
  const std::int64_t rows[] = {q.dim() - 1};
  GradValue s = matmul(q, transpose_last(k)) * scale;
  if (masked) s = s + c.input(3);
  GradValue e = exp(s - reduce(OpId::amax, s, rows, true));
  GradValue p = e / sum(e, rows, true);
  const GradValue& g = c.grad;
  if (c.needs_grad(2)) c.set(2, matmul(transpose_last(p), g));
  if (!c.needs_grad(0) && !c.needs_grad(1) && !(masked && c.needs_grad(3))) return;
  GradValue dp = matmul(g, transpose_last(v));
  GradValue ds = p * (dp - sum(dp * p, rows, true));
  if (masked && c.needs_grad(3)) c.set(3, sum_to(ds, c.input(3).shape()));
  if (c.needs_grad(0)) c.set(0, matmul(ds, k) * scale);
  if (c.needs_grad(1)) c.set(1, matmul(transpose_last(ds), q) * scale);
}

}  // namespace lt::grad::rule

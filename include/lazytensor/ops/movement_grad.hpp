#pragma once
// Gradient rules of the movement ops: each moves the output's gradient back to where its
// elements came from (the adjoint of the movement), with zeros where nothing was read.
#include "lazytensor/ops/grad.hpp"

namespace lt::grad::rule {

inline void reshape(GradContext& c) { c.set(0, grad::reshape(c.grad, c.input(0).shape())); }
inline void expand(GradContext& c) { c.set(0, sum_to(c.grad, c.input(0).shape())); }
inline void contiguous(GradContext& c) { c.set(0, c.grad); }
inline void flip(GradContext& c) { c.set(0, grad::flip(c.grad, {c.attrs.ints.begin(), c.attrs.ints.end()})); }
inline void tril(GradContext& c) { c.set(0, unary(OpId::tril, c.grad, c.attrs)); }
inline void triu(GradContext& c) { c.set(0, unary(OpId::triu, c.grad, c.attrs)); }

/// attrs.ints: the permutation; its inverse puts each dim back.
inline void permute(GradContext& c) {
  std::vector<std::int64_t> inverse(c.attrs.ints.size());
  for (std::size_t k = 0; k < inverse.size(); ++k) inverse[static_cast<std::size_t>(c.attrs.ints[k])] = static_cast<std::int64_t>(k);
  c.set(0, grad::permute(c.grad, std::move(inverse)));
}

/// attrs.ints: {dim, start, end, step}. The gradient's elements go back to positions start,
/// start + step, ...: each is followed by step - 1 zeros, then the whole is padded into place.
inline void slice(GradContext& c) {
  auto dim = static_cast<int>(c.attrs.ints[0]);
  std::int64_t start = c.attrs.ints[1], step = c.attrs.ints[3];
  std::int64_t n = c.input(0).shape()[dim], m = c.grad.shape()[dim];
  GradValue g = c.grad;
  if (step > 1) {
    Shape spread = g.shape();
    spread.insert(dim + 1, 1);
    Shape merged = g.shape();
    merged[dim] = m * step;
    g = grad::reshape(pad_dim(grad::reshape(g, spread), dim + 1, 0, step - 1), merged);
  }
  c.set(0, pad_dim(g, dim, start, n - start - g.shape()[dim]));
}

/// attrs.ints: {dim}. Each input gets its own range of the gradient; inputs of shape [0]
/// were skipped by the forward pass and get none.
inline void cat(GradContext& c) {
  auto dim = static_cast<int>(c.attrs.ints[0]);
  std::int64_t at = 0;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    const Shape& s = c.input(k).shape();
    if (s.rank() == 1 && s[0] == 0) continue;
    if (c.needs_grad(k)) c.set(k, grad::slice(c.grad, dim, at, at + s[dim]));
    at += s[dim];
  }
}

/// attrs: ints {before, after} pairs from the last dim back, floats {value}. Padding and
/// cropping are each other's adjoints: pad by the negated amounts.
inline void pad(GradContext& c) {
  std::vector<std::int64_t> back(c.attrs.ints.begin(), c.attrs.ints.end());
  for (std::int64_t& p : back) p = -p;
  c.set(0, grad::pad(c.grad, std::move(back)));
}

}  // namespace lt::grad::rule

#pragma once
// Gradient rules of the movement ops: each moves the output's gradient back to where its
// elements came from (the adjoint of the movement), with zeros where nothing was read.
#include "lazytensor/ops/grad.hpp"

namespace lt::grad::rule {

inline void reshape(GradContext& c) { c.set(0, grad::reshape(c.grad, c.input(0).shape())); }
inline void expand(GradContext& c) { c.set(0, sum_to(c.grad, c.input(0).shape())); }
inline void contiguous(GradContext& c) { c.set(0, c.grad); }
inline void flip(GradContext& c) {
  AttrWords dims = decode<DimsAttrs>(c.attrs).dims;
  c.set(0, grad::flip(c.grad, {dims.begin(), dims.end()}));
}
inline void tril(GradContext& c) { c.set(0, unary(OpId::tril, c.grad, c.attrs)); }
inline void triu(GradContext& c) { c.set(0, unary(OpId::triu, c.grad, c.attrs)); }

/// The inverse of the permutation puts each dim back.
inline void permute(GradContext& c) {
  AttrWords perm = decode<DimsAttrs>(c.attrs).dims;
  std::vector<std::int64_t> inverse(perm.size());
  for (std::size_t k = 0; k < inverse.size(); ++k) inverse[static_cast<std::size_t>(perm[k])] = static_cast<std::int64_t>(k);
  c.set(0, grad::permute(c.grad, inverse));
}

/// The gradient's elements go back to positions start, start + step, ...: each is followed by
/// step - 1 zeros, then the whole is padded into place.
inline void slice(GradContext& c) {
  const SliceAttrs s = decode<SliceAttrs>(c.attrs);
  const auto dim = static_cast<int>(s.dim);
  const std::int64_t start = s.start, step = s.step;
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

/// Each input gets its own range of the gradient; inputs of shape [0] were skipped by the
/// forward pass and get none.
inline void cat(GradContext& c) {
  const auto dim = static_cast<int>(decode<DimAttrs>(c.attrs).dim);
  std::int64_t at = 0;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    const Shape& s = c.input(k).shape();
    if (s.rank() == 1 && s[0] == 0) continue;
    if (c.needs_grad(k)) c.set(k, grad::slice(c.grad, dim, at, at + s[dim]));
    at += s[dim];
  }
}

/// Padding and cropping are each other's adjoints: pad by the negated amounts.
inline void pad(GradContext& c) {
  AttrWords pads = decode<PadAttrs>(c.attrs).pads;
  std::vector<std::int64_t> back(pads.begin(), pads.end());
  for (std::int64_t& p : back) p = -p;
  c.set(0, grad::pad(c.grad, back));
}

}  // namespace lt::grad::rule

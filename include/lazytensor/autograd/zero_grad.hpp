#pragma once
// Resetting a leaf's gradient: what Module::zero_grad and Optimizer::zero_grad do per parameter.
#include "lazytensor/autograd/grad_mode.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt::detail {

/// Drops `p`'s gradient (set_to_none: the next backward() sets it afresh) or sets it to zeros
/// in place, so that every handle to the gradient sees the zeros, as PyTorch's grad.zero_().
/// An undefined gradient stays undefined either way, as in PyTorch; a tensor that does not
/// require grad (an integer parameter, one frozen with requires_grad_(false)) has none.
inline void reset_grad(Tensor& p, bool set_to_none) {
  if (!p.requires_grad()) return;
  Tensor& g = p.mutable_grad();
  if (!g.defined()) return;
  if (set_to_none) {
    g = {};
    return;
  }
  no_grad guard;
  g.assign(zeros_like(g));
}

}  // namespace lt::detail

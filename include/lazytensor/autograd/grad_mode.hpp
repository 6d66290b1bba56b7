#pragma once
// Grad mode: whether ops record autograd history, per thread.
#include "lazytensor/trace/grad_hooks.hpp"  // the per-thread depth, read by the tracer too

namespace lt {

/// Whether ops on this thread record autograd history (false inside lt::no_grad).
inline bool is_grad_enabled() { return detail::no_grad_depth == 0; }

/// While alive, ops on this thread record no autograd history: their results do not require
/// grad (evaluation, optimizer updates). Scopes nest.
class no_grad {
 public:
  no_grad() { ++detail::no_grad_depth; }
  ~no_grad() { --detail::no_grad_depth; }
  no_grad(const no_grad&) = delete;
  no_grad& operator=(const no_grad&) = delete;
};

}  // namespace lt

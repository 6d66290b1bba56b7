#pragma once
// Recording the tape: the hooks the tracer calls when an operand requires grad. The IR node
// and its hash are made as for any op; the tape lives beside the graph, in the tensors.
#include <memory>
#include <span>

#include "lazytensor/autograd/grad_mode.hpp"
#include "lazytensor/autograd/tape.hpp"
#include "lazytensor/trace/dispatch.hpp"
#include "lazytensor/trace/grad_hooks.hpp"

namespace lt::detail {

/// Saves the op's inputs and output and links the result to the inputs' history. Ops marked
/// not differentiable, and results that cannot carry a gradient (integers, bools), record
/// nothing: their results do not require grad, as in PyTorch.
inline void record_grad(const OpDesc& op, std::span<const Tensor> inputs, const Attrs& attrs, const Tensor& out) {
  if (!is_grad_enabled() || op.grad == &not_differentiable || !is_floating(out.dtype())) return;
  auto node = std::make_shared<GradNode>();
  node->op = &op;
  node->attrs = attrs;
  node->device = out.device();
  node->inputs.reserve(inputs.size());
  node->edges.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    node->inputs.push_back(t.detach());
    const std::shared_ptr<AutogradMeta>& m = t.impl().autograd;
    if (!m) node->edges.push_back({});
    else if (m->grad_fn) node->edges.push_back({m->grad_fn, nullptr});
    else node->edges.push_back({nullptr, m});
  }
  node->output = out.detach();
  out.impl().autograd = std::make_shared<AutogradMeta>(AutogradMeta{std::move(node), {}});
}

/// An in-place update takes the value's history along, so that gradients flow through the new
/// value. Under no_grad nothing moves: a parameter updated by an optimizer stays the leaf it
/// was. A leaf that requires grad refuses a value with history, as in PyTorch: its gradient
/// would no longer reach it.
inline void assign_grad(TensorImpl& dst, const TensorImpl& src) {
  if (!is_grad_enabled() || !src.autograd) return;
  if (dst.autograd && !dst.autograd->grad_fn)
    fail("assign: a leaf that requires grad cannot take a value that requires grad (operands: ",
         describe(OperandRef{&dst.meta, dst.device}), ", ", describe(OperandRef{&src.meta, src.device}),
         "); update it inside lt::no_grad");
  dst.autograd = src.autograd;
}

inline constexpr GradHooks autograd_hooks{&record_grad, &assign_grad};

/// Called by everything that makes a tensor require grad: from then on the tracer reports ops
/// on such tensors.
inline void install_autograd_hooks() { grad_hooks.store(&autograd_hooks, std::memory_order_relaxed); }

}  // namespace lt::detail

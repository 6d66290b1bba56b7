#pragma once
// lt::Tensor's reverse-mode methods (declared in trace/tensor.hpp), defined once per program:
// included by the implementation (lazytensor/implementation.hpp), never by a file of its own.
#include "lazytensor/autograd/engine.hpp"
#include "lazytensor/autograd/record.hpp"

namespace lt {

Tensor& Tensor::requires_grad_(bool requires_grad) {
  TensorImpl& t = impl();
  if (!requires_grad) {
    if (t.autograd && t.autograd->grad_fn)
      fail("requires_grad_: only a leaf can stop requiring grad; use detach() for a result (operands: ",
           describe(*this), ")");
    t.autograd.reset();
    return *this;
  }
  if (!is_floating(t.meta.dtype))
    fail("requires_grad_: only floating tensors can require gradients (operands: ", describe(*this), ")");
  if (!t.autograd) {
    detail::install_autograd_hooks();
    t.autograd = std::make_shared<AutogradMeta>();
  }
  return *this;
}

bool Tensor::requires_grad() const { return impl().autograd != nullptr; }

bool Tensor::is_leaf() const { return !impl().autograd || !impl().autograd->grad_fn; }

const Tensor& Tensor::grad() const {
  static const Tensor none;
  const std::shared_ptr<AutogradMeta>& m = impl().autograd;
  return m ? m->grad : none;
}

Tensor& Tensor::mutable_grad() {
  const std::shared_ptr<AutogradMeta>& m = impl().autograd;
  if (!m) fail("mutable_grad: the tensor does not require grad (operands: ", describe(*this), ")");
  return m->grad;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph, Site site) const {
  RecordingSite at(site);
  detail::backward(*this, gradient, retain_graph);
}

}  // namespace lt

#pragma once
// The optimizers' update rules, defined once per program: included by the implementation
// (lazytensor/implementation.hpp), never by a file of its own. Each is an elementwise
// expression per parameter, whose fused kernel would otherwise compile in every file that
// makes an optimizer.
#include <cmath>

#include "lazytensor/optim/adam.hpp"
#include "lazytensor/optim/sgd.hpp"

namespace lt::optim {

void SGD::update(std::size_t k, Tensor& p, const Tensor& grad) {
  Tensor g = options.weight_decay != 0 ? Tensor(grad + p * options.weight_decay) : grad;
  if (options.momentum != 0) {
    Tensor& buf = momentum_[k];
    if (!buf.defined()) buf = g.detach();  // a tensor of its own: later steps assign to it
    else if (options.dampening != 0) buf.assign(buf * options.momentum + g * (1 - options.dampening));
    else buf.assign(buf * options.momentum + g);
    if (options.nesterov) {
      p.assign(p - (g + buf * options.momentum) * lr());
      return;
    }
    g = buf;
  }
  p.assign(p - g * lr());
}

void detail::AdamBase::update(std::size_t k, Tensor& p, const Tensor& grad) {
  const std::size_t group = group_of(k);
  const AdamOptions& o = group_options_[group];
  const double lr = this->lr(group);
  if (decoupled_ && o.weight_decay != 0) p.assign(p * (1 - lr * o.weight_decay));
  Tensor g = !decoupled_ && o.weight_decay != 0 ? Tensor(grad + p * o.weight_decay) : grad;
  Tensor& m = exp_avg_[k];
  Tensor& v = exp_avg_sq_[k];
  if (!m.defined()) {
    // The moments start as zeros moved to the device, data rather than ops of the step: the
    // first step then records the graph of every later one and compiles no plan of its own
    // (0 * beta + x is x exactly, so the values are those of starting from the gradient).
    m = zeros(p.shape(), cpu, p.dtype()).to(p.device());
    v = zeros(p.shape(), cpu, p.dtype()).to(p.device());
  }
  m.assign(m * o.beta1 + g * (1 - o.beta1));
  v.assign(v * o.beta2 + g * g * (1 - o.beta2));
  // lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps), with sqrt(1 - b2^t) moved into
  // the scalars: as t grows, no scalar tends to exactly 1, which would compile a new plan.
  auto t = static_cast<double>(steps());
  double root_correction2 = std::sqrt(1 - std::pow(o.beta2, t));
  double step_size = lr * root_correction2 / (1 - std::pow(o.beta1, t));
  p.assign(p - m * step_size / (sqrt(v) + o.eps * root_correction2));
}

}  // namespace lt::optim

#pragma once
// Gradient clipping, defined once per program: included by the implementation
// (lazytensor/implementation.hpp), never by a file of its own; its fused kernels would
// otherwise compile in every file that includes lazytensor/nn.hpp.
#include <cmath>
#include <vector>

#include "lazytensor/autograd/grad_mode.hpp"
#include "lazytensor/nn/utils/clip_grad.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"
#include "lazytensor/trace/functions/reduction.hpp"

namespace lt::nn::utils {

namespace detail {
/// The defined gradients of `parameters`' tensors, checked: floating, on one device.
inline std::vector<Tensor*> gradients(std::string_view op, const std::vector<Tensor>& parameters,
                                      std::vector<Tensor>& handles) {
  handles = parameters;  // handles share the parameters: their grads are the parameters' own
  std::vector<Tensor*> grads;
  for (Tensor& p : handles) {
    if (!p.defined() || !p.grad().defined()) continue;
    const Tensor& g = p.grad();
    if (!is_floating(g.dtype())) op_error(op, {&g, 1}, "gradients must be floating");
    if (!grads.empty() && g.device() != grads.front()->device()) {
      const Tensor both[] = {*grads.front(), g};
      op_error(op, both, "gradients must be on one device");
    }
    grads.push_back(&p.mutable_grad());
  }
  return grads;
}
}  // namespace detail

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite, Site site) {
  RecordingSite at(site);
  LT_CHECK(max_norm >= 0, "clip_grad_norm_: max_norm must not be negative or NaN, got ", max_norm);
  LT_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be positive or infinity, got ", norm_type);
  no_grad guard;
  std::vector<Tensor> handles;
  std::vector<Tensor*> grads = detail::gradients("clip_grad_norm_", parameters, handles);
  if (grads.empty()) return zeros({}, parameters.empty() ? cpu : parameters.front().device());
  bool inf = std::isinf(norm_type);
  // Each gradient's share, then one reduction over the shares: the sum of |g|^p (the largest
  // |g| for infinity), which the root of order p turns into PyTorch's norm of the norms.
  Tensor total;
  for (Tensor* g : grads) {
    if (g->numel() == 0) continue;  // adds nothing; amax of nothing would be an error
    Tensor share = inf ? abs(*g).amax()
                   : norm_type == 2 ? Tensor(*g * *g).sum()
                   : norm_type == 1 ? abs(*g).sum()
                                    : Tensor(pow(abs(*g), norm_type)).sum();
    total = !total.defined() ? share : inf ? Tensor(maximum(total, share)) : Tensor(total + share);
  }
  if (!total.defined()) total = zeros({}, grads.front()->device(), grads.front()->dtype());
  // The root and the check as one expression: one fused node.
  auto checked = [&](auto&& root) -> Tensor {
    if (error_if_nonfinite) return lt::detail::check_finite_grad_norm(std::forward<decltype(root)>(root), norm_type);
    return root;
  };
  total = inf ? checked(total)
          : norm_type == 2 ? checked(sqrt(total))
          : norm_type == 1 ? checked(total)
                           : checked(pow(total, 1.0 / norm_type));
  Tensor coef = clamp(max_norm / (total + 1e-6), std::nullopt, 1.0);
  for (Tensor* g : grads) g->assign(*g * coef.to(g->dtype()));
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value, Site site) {
  RecordingSite at(site);
  LT_CHECK(clip_value >= 0, "clip_grad_value_: clip_value must not be negative or NaN, got ", clip_value);
  no_grad guard;
  std::vector<Tensor> handles;
  for (Tensor* g : detail::gradients("clip_grad_value_", parameters, handles))
    g->assign(clamp(*g, -clip_value, clip_value));
}

}  // namespace lt::nn::utils

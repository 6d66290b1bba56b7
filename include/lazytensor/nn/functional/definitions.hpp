#pragma once
// The losses and attention of nn/functional/, defined once per program: included by the
// implementation (lazytensor/implementation.hpp), never by a file of its own. Their fused
// elementwise kernels would otherwise compile in every file that includes lazytensor/nn.hpp.
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "lazytensor/nn/functional/attention.hpp"
#include "lazytensor/nn/functional/loss.hpp"

namespace lt::nn::functional {

Tensor nll_loss(const Tensor& input, const Tensor& target, Reduction reduction, std::int64_t ignore_index,
                Site site) {
  RecordingSite at(site);
  detail::check_classes("nll_loss", input, target, ignore_index);
  Tensor counted = detail::counted(target, ignore_index);
  // Ignored targets gather class 0, in range; where() then drops their loss and gradient.
  Tensor safe = where(counted, target, 0);
  return detail::reduce_counted(detail::picked(input, safe), counted, reduction);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction, double label_smoothing,
                     std::int64_t ignore_index, Site site) {
  RecordingSite at(site);
  detail::check_classes("cross_entropy", input, target, ignore_index);
  if (!(label_smoothing >= 0 && label_smoothing <= 1))
    op_error("cross_entropy", {&input, 1}, ::lt::detail::concat("label_smoothing must be in [0, 1], got ", label_smoothing));
  int class_dim = input.dim() == 1 ? 0 : 1;
  Tensor log_probs = log_softmax(input, class_dim);
  Tensor counted = detail::counted(target, ignore_index);
  Tensor loss = detail::picked(log_probs, where(counted, target, 0));
  if (label_smoothing > 0) {
    Tensor uniform = -log_probs.mean(class_dim);
    loss = loss * (1 - label_smoothing) + uniform * label_smoothing;
  }
  return detail::reduce_counted(loss, counted, reduction);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction, Site site) {
  RecordingSite at(site);
  detail::check_same_shape("mse_loss", input, target);
  Tensor d = input - target;
  return detail::reduce(d * d, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, Site site) {
  RecordingSite at(site);
  detail::check_same_shape("l1_loss", input, target);
  return detail::reduce(abs(input - target), reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                               Reduction reduction, Site site) {
  RecordingSite at(site);
  detail::check_same_shape("binary_cross_entropy_with_logits", input, target);
  Tensor loss = relu(input) - input * target + log1p(exp(-abs(input)));
  return detail::reduce(loss, reduction);
}

std::pair<Tensor, Tensor> scaled_dot_product_attention_with_weights(const Tensor& q, const Tensor& k,
                                                                          const Tensor& v,
                                                                          const std::optional<Tensor>& attn_mask,
                                                                          double dropout_p, bool training, Site site) {
  RecordingSite at(site);
  const Tensor operands[] = {q, k, v};
  if (!q.defined() || !k.defined() || !v.defined()) op_error("scaled_dot_product_attention", operands, "an operand is undefined");
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2 || q.size(-1) != k.size(-1) || k.size(-2) != v.size(-2))
    op_error("scaled_dot_product_attention", operands, "expected q [*, L, E], k [*, S, E] and v [*, S, Ev]");
  Tensor scores = matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  if (attn_mask) {
    if (attn_mask->dtype() == boolean)
      scores = where(*attn_mask, -std::numeric_limits<double>::infinity(), scores);
    else
      scores = scores + *attn_mask;
  }
  Tensor weights = softmax(scores, -1);
  Tensor dropped = dropout(weights, dropout_p, training);
  return {matmul(dropped, v), weights};
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                           const std::optional<Tensor>& attn_mask, double dropout_p,
                                           bool training, Site site) {
  return scaled_dot_product_attention_with_weights(q, k, v, attn_mask, dropout_p, training, site).first;
}

}  // namespace lt::nn::functional

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
  return detail::reduce_counted(detail::picked(::lt::detail::autocast_wide(input), safe), counted, reduction);
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
  // Losses are of autocast's fp32 list: their operands in f32 under it.
  Tensor d = ::lt::detail::autocast_wide(input) - ::lt::detail::autocast_wide(target);
  return detail::reduce(d * d, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, Site site) {
  RecordingSite at(site);
  detail::check_same_shape("l1_loss", input, target);
  return detail::reduce(abs(::lt::detail::autocast_wide(input) - ::lt::detail::autocast_wide(target)), reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& labels,
                                               Reduction reduction, Site site) {
  RecordingSite at(site);
  detail::check_same_shape("binary_cross_entropy_with_logits", logits, labels);
  const Tensor input = ::lt::detail::autocast_wide(logits), target = ::lt::detail::autocast_wide(labels);
  Tensor loss = relu(input) - input * target + log1p(exp(-abs(input)));
  return detail::reduce(loss, reduction);
}

namespace detail {
/// Checks q, k, v and a mask (if any) of scaled_dot_product_attention: the mask's dtype, and
/// that it broadcasts to the scores [*, L, S] without widening them.
inline void check_attention(std::string_view op, const Tensor& q, const Tensor& k, const Tensor& v,
                            const std::optional<Tensor>& attn_mask) {
  const Tensor all[] = {q, k, v, attn_mask ? *attn_mask : Tensor()};
  std::span<const Tensor> operands(all, attn_mask ? 4 : 3);
  for (const Tensor& t : operands)
    if (!t.defined()) op_error(op, operands.first(3), "an operand is undefined");
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2 || q.size(-1) != k.size(-1) || k.size(-2) != v.size(-2))
    op_error(op, operands, "expected q [*, L, E], k [*, S, E] and v [*, S, Ev]");
  if (!attn_mask) return;
  const Tensor& m = *attn_mask;
  if (m.dtype() != boolean && m.dtype() != q.dtype())
    op_error(op, operands, ::lt::detail::concat("attn_mask must be bool or of the query's dtype ", name(q.dtype()),
                                                ", not ", name(m.dtype())));
  // The scores' shape: the batch dims of q and k broadcast, then [L, S].
  Shape qb(std::vector<std::int64_t>(q.shape().begin(), q.shape().end() - 2));
  Shape kb(std::vector<std::int64_t>(k.shape().begin(), k.shape().end() - 2));
  Shape batch, scores, both;
  if (!try_broadcast(qb, kb, batch)) return;  // matmul names that error
  std::vector<std::int64_t> dims(batch.begin(), batch.end());
  dims.push_back(q.size(-2));
  dims.push_back(k.size(-2));
  scores = Shape(dims);
  if (!try_broadcast(m.shape(), scores, both) || both != scores)
    op_error(op, operands, ::lt::detail::concat("attn_mask ", m.shape().str(), " does not broadcast to the scores ",
                                                scores.str(), " ([*, L, S])"));
}

/// The attention of q, k, v under an additive floating mask (or none), with its weights.
inline std::pair<Tensor, Tensor> attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& additive,
                                        double scale, double dropout_p, bool training) {
  Tensor scores = matmul(q, k.transpose(-2, -1)) * scale;
  if (additive.defined()) scores = scores + additive;
  Tensor weights = softmax(scores, -1);
  Tensor dropped = dropout(weights, dropout_p, training);
  return {matmul(dropped, v), weights};
}

/// Whether the fused attention op takes these operands: f32 or f64 throughout, one rank and
/// the same batch dims (the composite form broadcasts them), a mask of q's dtype if any.
inline bool fused_attention_fits(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& additive) {
  if (autocast_enabled()) return false;  // the composite's products run in bf16 under autocast
  if ((q.dtype() != f32 && q.dtype() != f64) || k.dtype() != q.dtype() || v.dtype() != q.dtype()) return false;
  if (additive.defined() && additive.dtype() != q.dtype()) return false;
  if (k.dim() != q.dim() || v.dim() != q.dim()) return false;
  for (int d = 0; d < q.dim() - 2; ++d)
    if (k.size(d) != q.size(d) || v.size(d) != q.size(d)) return false;
  return true;
}

/// -inf where `allowed` is false, 0 where true, in `dtype`.
inline Tensor additive_from(const Tensor& allowed, DType dtype) {
  return where(allowed, zeros({}, allowed.device(), dtype), -std::numeric_limits<double>::infinity());
}
}  // namespace detail

std::pair<Tensor, Tensor> scaled_dot_product_attention_with_weights(const Tensor& q, const Tensor& k, const Tensor& v,
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
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, Site site) {
  RecordingSite at(site);
  constexpr std::string_view op = "scaled_dot_product_attention";
  detail::check_attention(op, q, k, v, attn_mask);
  const Tensor operands[] = {q, k, v};
  if (!is_floating(q.dtype())) op_error(op, operands, "q, k and v must be floating");
  if (is_causal && attn_mask) op_error(op, operands, "is_causal excludes an explicit attn_mask");
  if (!(dropout_p >= 0 && dropout_p <= 1))
    op_error(op, operands, ::lt::detail::concat("dropout_p must be in [0, 1], got ", dropout_p));
  if (scale && !std::isfinite(*scale)) op_error(op, operands, ::lt::detail::concat("scale must be finite, got ", *scale));
  Tensor additive;
  if (is_causal) {  // key j is allowed for query i where j <= i
    std::int64_t l = q.size(-2), s = k.size(-2);
    Tensor rows = arange(l, q.device(), i64).unsqueeze(1), cols = arange(s, q.device(), i64).unsqueeze(0);
    additive = detail::additive_from(Tensor(cols <= rows), q.dtype());
  } else if (attn_mask) {
    additive = attn_mask->dtype() == boolean ? detail::additive_from(*attn_mask, q.dtype()) : *attn_mask;
  }
  double factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  if (dropout_p == 0 && detail::fused_attention_fits(q, k, v, additive)) {
    // One op: the [L, S] scores stay in per-thread blocks instead of reaching memory twice.
    std::vector<Tensor> in = {q, k, v};
    if (additive.defined()) in.push_back(additive);
    return record(contraction::attention, in, encode(AttentionAttrs{factor}));
  }
  return detail::attend(q, k, v, additive, factor, dropout_p, true).first;
}

}  // namespace lt::nn::functional

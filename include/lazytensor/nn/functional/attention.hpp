#pragma once
// Scaled dot-product attention, in lt::nn::functional.
#include <cmath>
#include <limits>
#include <optional>

#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn::functional {

/// softmax(q @ k^T / sqrt(E) + mask) @ v over [*, L, E] queries, [*, S, E] keys and
/// [*, S, Ev] values. `attn_mask` broadcasts to [*, L, S]: a bool mask is true where
/// attention is not allowed, a floating one is added to the scores. Returns [*, L, Ev] and,
/// when asked, the attention weights [*, L, S].
inline std::pair<Tensor, Tensor> scaled_dot_product_attention_with_weights(const Tensor& q, const Tensor& k,
                                                                          const Tensor& v,
                                                                          const std::optional<Tensor>& attn_mask = {},
                                                                          double dropout_p = 0.0, bool training = true) {
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

inline Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                           const std::optional<Tensor>& attn_mask = {}, double dropout_p = 0.0,
                                           bool training = true) {
  return scaled_dot_product_attention_with_weights(q, k, v, attn_mask, dropout_p, training).first;
}

}  // namespace lt::nn::functional

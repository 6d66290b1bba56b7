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
std::pair<Tensor, Tensor> scaled_dot_product_attention_with_weights(const Tensor& q, const Tensor& k,
                                                                          const Tensor& v,
                                                                          const std::optional<Tensor>& attn_mask = {},
                                                                          double dropout_p = 0.0, bool training = true,
 Site site = Site::current());

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                           const std::optional<Tensor>& attn_mask = {}, double dropout_p = 0.0,
                                           bool training = true, Site site = Site::current());

}  // namespace lt::nn::functional

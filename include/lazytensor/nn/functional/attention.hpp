#pragma once
// Scaled dot-product attention, in lt::nn::functional.
#include <cmath>
#include <limits>
#include <optional>

#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn::functional {

/// softmax(q @ k^T / sqrt(E) + mask) @ v over [*, L, E] queries, [*, S, E] keys and
/// [*, S, Ev] values, with dropout on the weights when `training`. `attn_mask` broadcasts to
/// [*, L, S] and follows MultiheadAttention's convention: a bool mask is true where attention
/// is NOT allowed, a floating one is added to the scores. Returns [*, L, Ev] and the attention
/// weights [*, L, S]. For PyTorch's functional convention, see scaled_dot_product_attention.
std::pair<Tensor, Tensor> scaled_dot_product_attention_with_weights(const Tensor& q, const Tensor& k, const Tensor& v,
                                                                    const std::optional<Tensor>& attn_mask = {},
                                                                    double dropout_p = 0.0, bool training = true,
                                                                    Site site = Site::current());

/// PyTorch's torch.nn.functional.scaled_dot_product_attention: softmax(q @ k^T * scale + mask)
/// @ v over [*, L, E] queries, [*, S, E] keys and [*, S, Ev] values; returns [*, L, Ev].
/// `attn_mask` broadcasts to [*, L, S]: a bool mask is true where attention IS allowed (false
/// scores become -inf), a floating one (of q's dtype) is added to the scores. `is_causal`
/// lets query i attend to keys 0..i only (the mask ones(L, S).tril(), aligned at the top
/// left, as PyTorch), and excludes `attn_mask`. `scale` defaults to 1 / sqrt(E). Dropout with
/// probability `dropout_p` applies to the weights whenever dropout_p > 0 (pass 0 to evaluate).
/// A row that may attend to nothing gives NaN, as PyTorch's reference form. lt::Error naming
/// the op and the shapes for a mask of the wrong shape or dtype.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::optional<Tensor>& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt,
                                    Site site = Site::current());

}  // namespace lt::nn::functional

#pragma once
// MultiheadAttention: num_heads attentions over projections of the query, key and value,
// concatenated and projected again.
#include <tuple>

#include "lazytensor/nn/functional/attention.hpp"
#include "lazytensor/nn/init.hpp"
#include "lazytensor/nn/linear.hpp"
#include "lazytensor/nn/module.hpp"

namespace lt::nn {

/// Options of MultiheadAttention, as PyTorch's keyword arguments.
struct MultiheadAttentionOptions {
  /// Dropout probability on the attention weights while training.
  double dropout = 0.0;
  /// Whether the input and output projections have biases.
  bool bias = true;
  /// Inputs and output [N, L, E] rather than [L, N, E] (PyTorch's default).
  bool batch_first = false;
};

/// Multi-head attention as torch.nn.MultiheadAttention: packed query, key and value projections, scaled
/// dot-product attention per head, and an output projection.
class MultiheadAttention : public Callable<MultiheadAttention> {
 public:
  /// `num_heads` must divide `embed_dim`; raises lt::Error otherwise or for a dropout outside [0, 1].
  MultiheadAttention(std::int64_t embed_dim, std::int64_t num_heads, MultiheadAttentionOptions options = {})
      : embed_dim(embed_dim), num_heads(num_heads), options(options), out_proj(embed_dim, embed_dim, {.bias = options.bias}) {
    LT_CHECK(embed_dim > 0 && num_heads > 0 && embed_dim % num_heads == 0, "MultiheadAttention: num_heads (", num_heads,
             ") must divide embed_dim (", embed_dim, ")");
    LT_CHECK(options.dropout >= 0 && options.dropout <= 1, "MultiheadAttention: dropout must be in [0, 1], got ",
             options.dropout);
    // Glorot uniform for the packed projection, as PyTorch; biases start at zero.
    in_proj_weight = init::uniform({3 * embed_dim, embed_dim}, std::sqrt(6.0 / static_cast<double>(4 * embed_dim)));
    if (options.bias) {
      in_proj_bias = zeros({3 * embed_dim});
      out_proj.bias = zeros({embed_dim}).requires_grad_();
    }
    register_parameter("in_proj_weight", in_proj_weight);
    register_parameter("in_proj_bias", in_proj_bias);
    register_module("out_proj", out_proj);
  }

  /// query [N, L, E] (batch_first) or [L, N, E], or unbatched [L, E]; key and value [.., S, E].
  /// key_padding_mask [N, S] (or [S]) bool, true for keys to ignore, or floating, added;
  /// attn_mask [L, S] or [N * num_heads, L, S], bool or floating likewise. The arguments are
  /// PyTorch's, in its order. is_causal lets query i attend to keys 0..i only: with an
  /// attn_mask it is PyTorch's hint that the mask is that causal mask (the mask is used as
  /// given); without one the causal mask is made here (where PyTorch asks for the mask).
  /// Returns the output, shaped as query, and the attention weights: averaged over the heads,
  /// [N, L, S] (or [L, S]), or per head, [N, H, L, S] (or [H, L, S]), when
  /// average_attn_weights is false. Without need_weights the weights are an undefined tensor
  /// (PyTorch's None) and nothing of them is recorded beyond what the output needs. A mask of
  /// the wrong shape, or neither bool nor floating, raises lt::Error naming the shapes.
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& key_padding_mask = {}, bool need_weights = true,
                                    const std::optional<Tensor>& attn_mask = {}, bool average_attn_weights = true,
                                    bool is_causal = false, Site site = Site::current()) const {
    RecordingSite at(site);
    const Tensor operands[] = {query, key, value};
    if (!query.defined() || !key.defined() || !value.defined()) op_error("MultiheadAttention", operands, "an operand is undefined");
    bool unbatched = query.dim() == 2;
    if ((query.dim() != 2 && query.dim() != 3) || key.dim() != query.dim() || value.dim() != query.dim() ||
        query.size(-1) != embed_dim || key.size(-1) != embed_dim || value.size(-1) != embed_dim)
      op_error("MultiheadAttention", operands,
               ::lt::detail::concat("expected query, key and value of rank 2 or 3 with ", embed_dim, " features"));
    auto batch_major = [&](const Tensor& t) {
      if (unbatched) return t.unsqueeze(0);
      return options.batch_first ? t : t.transpose(0, 1);
    };
    Tensor q = batch_major(query), k = batch_major(key), v = batch_major(value);
    if (k.size(0) != q.size(0) || k.size(1) != v.size(1))
      op_error("MultiheadAttention", operands, "key and value must have the query's batch and one length");
    std::int64_t n = q.size(0), l = q.size(1), s = k.size(1), d = embed_dim / num_heads;
    // Self-attention (one tensor as query, key and value) projects once with the packed weight,
    // one product three times as wide, and takes each part as a view of its output.
    const bool self = query.impl_ptr() == key.impl_ptr() && key.impl_ptr() == value.impl_ptr();
    Tensor packed;
    if (self) packed = in_proj_bias.defined() ? linear(q, in_proj_weight, in_proj_bias) : linear(q, in_proj_weight);
    auto proj = [&](const Tensor& t, std::int64_t part) {
      Tensor y;
      if (self) {
        y = packed.narrow(-1, part * embed_dim, embed_dim);
      } else {
        Tensor w = in_proj_weight.narrow(0, part * embed_dim, embed_dim);
        y = in_proj_bias.defined() ? linear(t, w, in_proj_bias.narrow(0, part * embed_dim, embed_dim)) : linear(t, w);
      }
      return y.reshape({n, t.size(1), num_heads, d}).transpose(1, 2);  // [N, H, len, d]
    };
    Tensor mask = combined_mask(n, l, s, key_padding_mask, attn_mask, is_causal, operands);
    std::optional<Tensor> sdpa_mask = mask.defined() ? std::optional<Tensor>(mask) : std::nullopt;
    Tensor heads, weights;
    if (need_weights) {
      std::tie(heads, weights) = functional::scaled_dot_product_attention_with_weights(
          proj(q, 0), proj(k, 1), proj(v, 2), sdpa_mask, options.dropout, is_training());
      if (average_attn_weights) weights = weights.mean(1);
      if (unbatched) weights = weights.squeeze(0);
    } else {
      // PyTorch's functional form: dropout whenever its rate is above 0, so eval passes 0; the
      // combined mask is a floating one, added to the scores in either convention.
      heads = functional::scaled_dot_product_attention(proj(q, 0), proj(k, 1), proj(v, 2), sdpa_mask,
                                                       is_training() ? options.dropout : 0.0, /*is_causal=*/false);
    }
    Tensor out = out_proj(heads.transpose(1, 2).reshape({n, l, embed_dim}));
    if (unbatched) return {out.squeeze(0), weights};
    return {options.batch_first ? out : out.transpose(0, 1), weights};
  }

  /// forward(): spelled out, not forwarded, so that `{}` may stand for a mask left out.
  std::pair<Tensor, Tensor> operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                       const std::optional<Tensor>& key_padding_mask = {}, bool need_weights = true,
                                       const std::optional<Tensor>& attn_mask = {}, bool average_attn_weights = true,
                                       bool is_causal = false, Site site = Site::current()) const {
    return forward(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights, is_causal, site);
  }

  /// @{
  /// The model width E and the number of heads (E / num_heads per head).
  std::int64_t embed_dim, num_heads;
  /// @}
  /// The options it was made with.
  MultiheadAttentionOptions options;
  /// @{
  /// The query, key and value projections, stacked: weight [3E, E], bias [3E] (undefined without bias).
  Tensor in_proj_weight, in_proj_bias;  // [3E, E], [3E]: query, key and value projections stacked
  /// @}
  /// The output projection, E -> E.
  Linear out_proj;

 private:
  /// The masks as one additive floating mask broadcasting to [N, H, L, S] (undefined if none).
  Tensor combined_mask(std::int64_t n, std::int64_t l, std::int64_t s, const std::optional<Tensor>& key_padding_mask,
                       const std::optional<Tensor>& attn_mask, bool is_causal, std::span<const Tensor> operands) const {
    auto additive = [&](const Tensor& m, const char* which) {
      if (!m.defined()) op_error("MultiheadAttention", operands, ::lt::detail::concat(which, " is undefined"));
      if (m.dtype() != boolean && !is_floating(m.dtype()))
        op_error("MultiheadAttention", operands,
                 ::lt::detail::concat(which, " ", m.shape().str(), " must be bool or floating, not ", name(m.dtype())));
      if (m.dtype() != boolean) return m.to(in_proj_weight.dtype());
      return Tensor(where(m, -std::numeric_limits<double>::infinity(), zeros({}, m.device(), in_proj_weight.dtype())));
    };
    Tensor mask;
    if (is_causal && !attn_mask) {  // key j is allowed for query i where j <= i, aligned at the top left
      Device dev = in_proj_weight.device();
      Tensor rows = arange(l, dev, i64).unsqueeze(1), cols = arange(s, dev, i64).unsqueeze(0);
      mask = additive(Tensor(cols > rows), "the causal mask");
    }
    if (attn_mask) {
      const Tensor& m = *attn_mask;
      if (m.defined() && m.dim() == 2 && m.size(0) == l && m.size(1) == s) mask = additive(m, "attn_mask");
      else if (m.defined() && m.dim() == 3 && m.size(0) == n * num_heads && m.size(1) == l && m.size(2) == s)
        mask = additive(m, "attn_mask").reshape({n, num_heads, l, s});
      else
        op_error("MultiheadAttention", operands,
                 ::lt::detail::concat("attn_mask ", m.defined() ? m.shape().str() : "undefined", " must be [L, S] = [", l,
                                      ", ", s, "] or [N * num_heads, L, S] = [", n * num_heads, ", ", l, ", ", s, "]"));
    }
    if (key_padding_mask) {
      const Tensor& m = *key_padding_mask;
      bool fits = m.defined() && ((m.dim() == 2 && m.size(0) == n && m.size(1) == s) ||
                                  (m.dim() == 1 && n == 1 && m.size(0) == s));
      if (!fits)
        op_error("MultiheadAttention", operands,
                 ::lt::detail::concat("key_padding_mask ", m.defined() ? m.shape().str() : "undefined", " must be [N, S] = [", n,
                                      ", ", s, "]"));
      Tensor pad = additive(m, "key_padding_mask").reshape({n, 1, 1, s});
      mask = mask.defined() ? Tensor(mask + pad) : pad;
    }
    return mask;
  }
};

}  // namespace lt::nn

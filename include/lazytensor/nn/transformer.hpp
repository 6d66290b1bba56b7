#pragma once
// TransformerEncoderLayer: self-attention and a feed-forward block, each with a residual
// connection and a LayerNorm (after the block, or before it with norm_first).
#include <string>

#include "lazytensor/nn/attention.hpp"
#include "lazytensor/nn/dropout.hpp"
#include "lazytensor/nn/layer_norm.hpp"
#include "lazytensor/nn/linear.hpp"

namespace lt::nn {

/// Options of TransformerEncoderLayer, as PyTorch's keyword arguments.
struct TransformerEncoderLayerOptions {
  /// Width of the feed-forward network's hidden layer.
  std::int64_t dim_feedforward = 2048;
  /// Dropout probability of the attention and the feed-forward network.
  double dropout = 0.1;
  /// The feed-forward network's activation: "relu" or "gelu".
  std::string activation = "relu";
  /// The layer norms' epsilon.
  double layer_norm_eps = 1e-5;
  /// Inputs [N, S, E] rather than [S, N, E] (PyTorch's default).
  bool batch_first = false;
  /// Layer norm before the attention and the feed-forward network (pre-norm) rather than after.
  bool norm_first = false;
};

/// One encoder layer, self-attention then a feed-forward network, each with a residual and a layer norm, as
/// torch.nn.TransformerEncoderLayer.
class TransformerEncoderLayer : public Callable<TransformerEncoderLayer> {
 public:
  /// A layer of width `d_model` with `nhead` heads; raises lt::Error for an unknown activation.
  TransformerEncoderLayer(std::int64_t d_model, std::int64_t nhead, TransformerEncoderLayerOptions options = {})
      : options(options),
        self_attn(d_model, nhead, {.dropout = options.dropout, .batch_first = options.batch_first}),
        linear1(d_model, options.dim_feedforward),
        linear2(options.dim_feedforward, d_model),
        norm1(Shape{d_model}, {.eps = options.layer_norm_eps}),
        norm2(Shape{d_model}, {.eps = options.layer_norm_eps}),
        dropout(options.dropout),
        dropout1(options.dropout),
        dropout2(options.dropout) {
    LT_CHECK(options.activation == "relu" || options.activation == "gelu",
             "TransformerEncoderLayer: activation must be \"relu\" or \"gelu\", got \"", options.activation, "\"");
    LT_REGISTER_MODULES(self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2);
  }

  /// src [N, S, E] (batch_first) or [S, N, E]; masks as MultiheadAttention's.
  Tensor forward(const Tensor& src, const std::optional<Tensor>& src_mask = {},
                 const std::optional<Tensor>& src_key_padding_mask = {}, Site site = Site::current()) {
    RecordingSite at(site);
    Tensor x = src;
    if (options.norm_first) {
      x = x + self_attention(norm1(x), src_mask, src_key_padding_mask);
      x = x + feed_forward(norm2(x));
    } else {
      x = norm1(x + self_attention(x, src_mask, src_key_padding_mask));
      x = norm2(x + feed_forward(x));
    }
    return x;
  }
  /// forward(): spelled out, not forwarded, so that `{}` may stand for a mask left out.
  Tensor operator()(const Tensor& src, const std::optional<Tensor>& src_mask = {},
                    const std::optional<Tensor>& src_key_padding_mask = {}, Site site = Site::current()) {
    return forward(src, src_mask, src_key_padding_mask, site);
  }

  /// The options it was made with.
  TransformerEncoderLayerOptions options;
  /// The self-attention block.
  MultiheadAttention self_attn;
  /// @{
  /// The feed-forward network: d_model -> dim_feedforward -> d_model.
  Linear linear1, linear2;
  /// @}
  /// @{
  /// The layer norms after (or, with norm_first, before) the attention and the feed-forward blocks.
  LayerNorm norm1, norm2;
  /// @}
  /// @{
  /// Dropout inside the feed-forward network and on each block's output.
  Dropout dropout, dropout1, dropout2;
  /// @}

 private:
  Tensor self_attention(const Tensor& x, const std::optional<Tensor>& mask, const std::optional<Tensor>& padding) {
    return dropout1(self_attn(x, x, x, padding, /*need_weights=*/false, mask).first);
  }
  Tensor feed_forward(const Tensor& x) {
    Tensor h = linear1(x);
    h = options.activation == "gelu" ? Tensor(gelu(h)) : Tensor(relu(h));
    return dropout2(linear2(dropout(h)));
  }
};

}  // namespace lt::nn

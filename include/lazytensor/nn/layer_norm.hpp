#pragma once
// LayerNorm over the trailing dims `normalized_shape`.
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn {

/// Options of LayerNorm, as PyTorch's keyword arguments.
struct LayerNormOptions {
  /// Added to the variance before its square root.
  double eps = 1e-5;
  /// Whether the layer has a learned scale (`weight`) and shift (`bias`).
  bool elementwise_affine = true;
};

/// Layer normalisation over the trailing dims given by `normalized_shape`, as torch.nn.LayerNorm.
class LayerNorm : public Callable<LayerNorm> {
 public:
  /// Normalises over trailing dims of this shape; weight starts at 1 and bias at 0.
  explicit LayerNorm(Shape normalized_shape, LayerNormOptions options = {})
      : normalized_shape(normalized_shape), options(options) {
    LT_CHECK(normalized_shape.rank() >= 1, "LayerNorm: normalized_shape must have at least one dim");
    for (int i = 0; i < normalized_shape.rank(); ++i)
      LT_CHECK(normalized_shape[i] > 0, "LayerNorm: normalized_shape ", normalized_shape.str(), " has an empty dim");
    if (options.elementwise_affine) {
      weight = ones(normalized_shape);
      bias = zeros(normalized_shape);
    }
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }

  /// layer_norm(x, normalized_shape, weight, bias, eps).
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    std::optional<Tensor> w, b;
    if (weight.defined()) w = weight, b = bias;
    return layer_norm(x, normalized_shape, w, b, options.eps);
  }

  /// The trailing dims it normalises over.
  Shape normalized_shape;
  /// The options it was made with.
  LayerNormOptions options;
  /// @{
  /// Scale and shift, each of `normalized_shape` (undefined without elementwise_affine).
  Tensor weight, bias;  // normalized_shape each (elementwise_affine)
  /// @}
};

}  // namespace lt::nn

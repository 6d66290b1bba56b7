#pragma once
// LayerNorm over the trailing dims `normalized_shape`.
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn {

struct LayerNormOptions {
  double eps = 1e-5;
  bool elementwise_affine = true;
};

class LayerNorm : public Module {
 public:
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

  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    std::optional<Tensor> w, b;
    if (weight.defined()) w = weight, b = bias;
    return layer_norm(x, normalized_shape, w, b, options.eps);
  }
  Tensor operator()(const Tensor& x, Site site = Site::current()) const { return forward(x, site); }

  Shape normalized_shape;
  LayerNormOptions options;
  Tensor weight, bias;  // normalized_shape each (elementwise_affine)
};

}  // namespace lt::nn

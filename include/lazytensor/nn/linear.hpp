#pragma once
// Linear: y = x @ weight^T + bias over the last dim.
#include "lazytensor/nn/init.hpp"
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn {

/// Options of Linear.
struct LinearOptions {
  /// Whether the layer adds a learned bias.
  bool bias = true;
};

/// A fully connected layer, y = x weightᵀ + bias, as torch.nn.Linear.
class Linear : public Callable<Linear> {
 public:
  /// Weight and bias start uniform in ±1/sqrt(in_features), as in PyTorch.
  Linear(std::int64_t in_features, std::int64_t out_features, LinearOptions options = {})
      : in_features(in_features), out_features(out_features) {
    LT_CHECK(in_features > 0 && out_features > 0, "Linear: features must be positive, got ", in_features, " -> ",
             out_features);
    weight = init::fan_in_uniform({out_features, in_features}, in_features);
    if (options.bias) bias = init::fan_in_uniform({out_features}, in_features);
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }

  /// x: [*, in_features] -> [*, out_features].
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    return bias.defined() ? linear(x, weight, bias) : linear(x, weight);
  }

  /// @{
  /// The sizes of the last dim of the input and of the output.
  std::int64_t in_features, out_features;
  /// @}
  /// @{
  /// Weight [out, in] and bias [out] (undefined without bias).
  Tensor weight, bias;  // [out, in], [out] (undefined without bias)
  /// @}
};

}  // namespace lt::nn

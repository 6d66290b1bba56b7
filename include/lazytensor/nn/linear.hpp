#pragma once
// Linear: y = x @ weight^T + bias over the last dim.
#include "lazytensor/nn/init.hpp"
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn {

struct LinearOptions {
  bool bias = true;
};

class Linear : public Module {
 public:
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
  Tensor operator()(const Tensor& x, Site site = Site::current()) const { return forward(x, site); }

  std::int64_t in_features, out_features;
  Tensor weight, bias;  // [out, in], [out] (undefined without bias)
};

}  // namespace lt::nn

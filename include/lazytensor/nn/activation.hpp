#pragma once
// Activations as modules, for Sequential. Each returns a Tensor (its fused expression
// committed), since a module's output feeds the next module.
#include <string>

#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"

namespace lt::nn {

#define LT_NN_ACTIVATION(Name, fn)                                          \
  class Name : public Callable<Name> {                                      \
   public:                                                                  \
    Tensor forward(const Tensor& x, Site site = Site::current()) const {    \
      RecordingSite at(site);                                               \
      return ::lt::fn(x);                                                   \
    }                                                                       \
  };
LT_NN_ACTIVATION(ReLU, relu)
LT_NN_ACTIVATION(Tanh, tanh)
LT_NN_ACTIVATION(Sigmoid, sigmoid)
#undef LT_NN_ACTIVATION

/// GELU as a module: `gelu(x, approximate)`.
class GELU : public Callable<GELU> {
 public:
  /// approximate: "none" (erf) or "tanh".
  explicit GELU(std::string approximate = "none") : approximate(std::move(approximate)) {
    LT_CHECK(this->approximate == "none" || this->approximate == "tanh",
             "GELU: approximate must be \"none\" or \"tanh\", got \"", this->approximate, "\"");
  }
  /// gelu(x) with this module's approximation.
  Tensor forward(const Tensor& x, Site site = Site::current()) const { return gelu(x, approximate, site); }

  /// "none" (the exact form, with erf) or "tanh".
  std::string approximate;
};

}  // namespace lt::nn

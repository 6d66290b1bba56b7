#pragma once
// Adam and AdamW (decoupled weight decay), as PyTorch's torch.optim.Adam and AdamW.
#include "lazytensor/optim/optimizer.hpp"

namespace lt::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

namespace detail {
class AdamBase : public Optimizer {
 public:
  AdamBase(std::string_view name, std::vector<Tensor> params, AdamOptions options, bool decoupled)
      : Optimizer(name, std::move(params), options.lr),
        options(options),
        decoupled_(decoupled),
        exp_avg_(parameters().size()),
        exp_avg_sq_(parameters().size()) {
    LT_CHECK(options.beta1 >= 0 && options.beta1 < 1 && options.beta2 >= 0 && options.beta2 < 1, name,
             ": betas must be in [0, 1), got ", options.beta1, " and ", options.beta2);
    LT_CHECK(options.eps >= 0, name, ": eps must not be negative, got ", options.eps);
    LT_CHECK(options.weight_decay >= 0, name, ": weight_decay must not be negative, got ", options.weight_decay);
  }

  AdamOptions options;  // lr lives in the optimizer (lr(), set_lr())

 protected:
  void update(std::size_t k, Tensor& p, const Tensor& grad) override;  // optim/updates.hpp

 private:
  bool decoupled_;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
};
}  // namespace detail

/// Adam; weight_decay adds weight_decay * p to the gradient (L2 regularisation).
class Adam : public detail::AdamBase {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options = {}) : AdamBase("Adam", std::move(params), options, false) {}
};

struct AdamWOptions : AdamOptions {
  AdamWOptions() { weight_decay = 1e-2; }
};

/// AdamW: the weight decay shrinks p by lr * weight_decay before the Adam step.
class AdamW : public detail::AdamBase {
 public:
  AdamW(std::vector<Tensor> params, AdamOptions options = AdamWOptions{})
      : AdamBase("AdamW", std::move(params), options, true) {}
};

}  // namespace lt::optim

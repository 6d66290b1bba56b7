#pragma once
// Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay,
// as PyTorch's torch.optim.SGD.
#include "lazytensor/optim/optimizer.hpp"

namespace lt::optim {

struct SGDOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options = {})
      : Optimizer("SGD", std::move(params), options.lr), options(options), momentum_(parameters().size()) {
    LT_CHECK(options.momentum >= 0, "SGD: momentum must not be negative, got ", options.momentum);
    LT_CHECK(options.weight_decay >= 0, "SGD: weight_decay must not be negative, got ", options.weight_decay);
    LT_CHECK(!options.nesterov || (options.momentum > 0 && options.dampening == 0),
             "SGD: Nesterov momentum needs a positive momentum and zero dampening");
  }

  SGDOptions options;  // lr lives in the optimizer (lr(), set_lr())

 protected:
  void update(std::size_t k, Tensor& p, const Tensor& grad) override;  // optim/updates.hpp

 private:
  std::vector<Tensor> momentum_;
};

}  // namespace lt::optim

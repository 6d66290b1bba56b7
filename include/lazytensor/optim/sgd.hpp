#pragma once
// Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay,
// as PyTorch's torch.optim.SGD.
#include "lazytensor/optim/optimizer.hpp"

namespace lt::optim {

/// Options of SGD, as PyTorch's keyword arguments.
struct SGDOptions {
  /// The learning rate.
  double lr = 0.01;
  /// Momentum factor; 0 keeps no momentum buffer.
  double momentum = 0.0;
  /// Dampening of the gradient's share of the momentum.
  double dampening = 0.0;
  /// L2 penalty: weight_decay * p is added to the gradient.
  double weight_decay = 0.0;
  /// Nesterov momentum (needs momentum > 0 and dampening 0).
  bool nesterov = false;
};

/// Stochastic gradient descent with momentum, dampening, Nesterov and weight decay, with PyTorch's update
/// rule.
class SGD : public Optimizer {
 public:
  /// Optimizes `params` (leaf tensors that require grad); raises lt::Error for invalid options.
  SGD(std::vector<Tensor> params, SGDOptions options = {})
      : Optimizer("SGD", std::move(params), options.lr), options(options), momentum_(parameters().size()) {
    check(options);
  }

  /// The options it was made with; the rate in use is lr(), which schedules change.
  SGDOptions options;  // lr lives in the optimizer (lr(), set_lr())

  /// PyTorch's layout: state {i: {"momentum_buffer"}} for the parameters that have one, and a
  /// group of lr, momentum, dampening, weight_decay, nesterov (and maximize, off).
  OptimizerState state_dict() const override {
    OptimizerState s{{}, groups([&](std::size_t) {
                       return Hyperparameters{{"lr", lr()},
                                              {"momentum", options.momentum},
                                              {"dampening", options.dampening},
                                              {"weight_decay", options.weight_decay},
                                              {"nesterov", options.nesterov},
                                              {"maximize", false}};
                     })};
    for (std::size_t k = 0; k < momentum_.size(); ++k)
      if (momentum_[k].defined()) s.state[static_cast<std::int64_t>(k)]["momentum_buffer"] = momentum_[k].detach();
    return s;
  }
  void load_state_dict(const OptimizerState& s) override {
    detail::check_layout("SGD", s, parameters(), group_indices(), {"momentum_buffer"});
    detail::GroupReader g(detail::group_where("SGD"), s.param_groups[0].options);
    g.check_keys({"lr", "momentum", "dampening", "weight_decay", "nesterov"});
    SGDOptions o{.lr = g.number("lr"), .momentum = g.number("momentum"), .dampening = g.number("dampening"),
                 .weight_decay = g.number("weight_decay"), .nesterov = g.flag("nesterov")};
    check(o);
    LT_CHECK(o.lr >= 0, "SGD.load_state_dict: the learning rate must not be negative, got ", o.lr);
    std::vector<Tensor> buffers(parameters().size());
    for (auto& [k, entry] : s.state)
      buffers[static_cast<std::size_t>(k)] =
          detail::state_value(entry.at("momentum_buffer"), parameters()[static_cast<std::size_t>(k)]);
    options = o;
    set_lr(o.lr);
    momentum_ = std::move(buffers);
  }

 protected:
  void update(std::size_t k, Tensor& p, const Tensor& grad) override;  // optim/definitions.hpp

 private:
  static void check(const SGDOptions& o) {
    LT_CHECK(o.momentum >= 0, "SGD: momentum must not be negative, got ", o.momentum);
    LT_CHECK(o.weight_decay >= 0, "SGD: weight_decay must not be negative, got ", o.weight_decay);
    LT_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0),
             "SGD: Nesterov momentum needs a positive momentum and zero dampening");
  }

  std::vector<Tensor> momentum_;
};

}  // namespace lt::optim

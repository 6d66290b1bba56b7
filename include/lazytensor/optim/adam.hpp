#pragma once
// Adam and AdamW (decoupled weight decay), as PyTorch's torch.optim.Adam and AdamW.
#include "lazytensor/optim/optimizer.hpp"

namespace lt::optim {

/// Options of Adam and AdamW, as PyTorch's keyword arguments.
struct AdamOptions {
  /// The learning rate.
  double lr = 1e-3;
  /// @{
  /// Decay rates of the running means of the gradient and of its square.
  double beta1 = 0.9, beta2 = 0.999;
  /// @}
  /// Added to the square root of the second moment, for stability.
  double eps = 1e-8;
  /// Weight decay: L2 in Adam, decoupled in AdamW.
  double weight_decay = 0.0;
};

namespace detail {
class AdamBase : public Optimizer {
 public:
  AdamBase(std::string_view name, std::vector<Tensor> params, AdamOptions options, bool decoupled)
      : Optimizer(name, std::move(params), options.lr),
        options(options),
        name_(name),
        decoupled_(decoupled),
        exp_avg_(parameters().size()),
        exp_avg_sq_(parameters().size()) {
    check(name, options);
  }

  AdamOptions options;  // lr lives in the optimizer (lr(), set_lr())

  /// PyTorch's layout: state {i: {"step", "exp_avg", "exp_avg_sq"}} for the parameters that
  /// have moments, and a group of lr, betas, eps, weight_decay (and amsgrad, maximize, off).
  OptimizerState state_dict() const override {
    OptimizerState s{{}, {group({{"lr", lr()},
                                 {"betas", std::vector<double>{options.beta1, options.beta2}},
                                 {"eps", options.eps},
                                 {"weight_decay", options.weight_decay},
                                 {"amsgrad", false},
                                 {"maximize", false}})}};
    for (std::size_t k = 0; k < exp_avg_.size(); ++k)
      if (exp_avg_[k].defined())
        s.state[static_cast<std::int64_t>(k)] = {
            {"step", detail::step_tensor(steps())}, {"exp_avg", exp_avg_[k].detach()}, {"exp_avg_sq", exp_avg_sq_[k].detach()}};
    return s;
  }
  /// lazytensor counts one step for all parameters, so every "step" must agree.
  void load_state_dict(const OptimizerState& s) override {
    const std::string who(name_);
    detail::check_layout(who, s, parameters(), {"step", "exp_avg", "exp_avg_sq"});
    detail::GroupReader g(detail::group_where(who), s.param_groups[0].options);
    g.check_keys({"lr", "betas", "eps", "weight_decay"});
    std::vector<double> betas = g.numbers("betas", 2);
    AdamOptions o{.lr = g.number("lr"), .beta1 = betas[0], .beta2 = betas[1], .eps = g.number("eps"),
                  .weight_decay = g.number("weight_decay")};
    check(who, o);
    LT_CHECK(o.lr >= 0, who, ".load_state_dict: the learning rate must not be negative, got ", o.lr);
    long steps = 0;
    std::vector<Tensor> m(parameters().size()), v(parameters().size());
    for (auto& [k, entry] : s.state) {
      long step = detail::step_value(who, entry.at("step"));
      LT_CHECK(k == s.state.begin()->first || step == steps, who,
               ".load_state_dict: parameters have different step counts (", steps, " and ", step,
               "); lazytensor counts one for all");
      steps = step;
      const Tensor& p = parameters()[static_cast<std::size_t>(k)];
      m[static_cast<std::size_t>(k)] = detail::state_value(entry.at("exp_avg"), p);
      v[static_cast<std::size_t>(k)] = detail::state_value(entry.at("exp_avg_sq"), p);
    }
    options = o;
    set_lr(o.lr);
    set_steps(steps);
    exp_avg_ = std::move(m);
    exp_avg_sq_ = std::move(v);
  }

 protected:
  void update(std::size_t k, Tensor& p, const Tensor& grad) override;  // optim/updates.hpp

 private:
  static void check(std::string_view name, const AdamOptions& o) {
    LT_CHECK(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1, name, ": betas must be in [0, 1), got ",
             o.beta1, " and ", o.beta2);
    LT_CHECK(o.eps >= 0, name, ": eps must not be negative, got ", o.eps);
    LT_CHECK(o.weight_decay >= 0, name, ": weight_decay must not be negative, got ", o.weight_decay);
  }

  std::string_view name_;  // "Adam" or "AdamW": a literal
  bool decoupled_;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
};
}  // namespace detail

/// Adam; weight_decay adds weight_decay * p to the gradient (L2 regularisation).
class Adam : public detail::AdamBase {
 public:
  /// Optimizes `params` (leaf tensors that require grad); raises lt::Error for a negative rate or an invalid
  /// option.
  Adam(std::vector<Tensor> params, AdamOptions options = {}) : AdamBase("Adam", std::move(params), options, false) {}
};

/// AdamW's defaults: those of Adam with weight_decay 0.01, as in PyTorch.
struct AdamWOptions : AdamOptions {
  AdamWOptions() { weight_decay = 1e-2; }
};

/// AdamW: the weight decay shrinks p by lr * weight_decay before the Adam step.
class AdamW : public detail::AdamBase {
 public:
  /// Optimizes `params`. The default options are AdamWOptions (weight_decay 0.01); a braced `{.lr = ...}`
  /// makes an AdamOptions, whose weight_decay is 0 unless given.
  AdamW(std::vector<Tensor> params, AdamOptions options = AdamWOptions{})
      : AdamBase("AdamW", std::move(params), options, true) {}
};

}  // namespace lt::optim

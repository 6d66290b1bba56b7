#pragma once
// Adam and AdamW (decoupled weight decay), as PyTorch's torch.optim.Adam and AdamW.
#include <algorithm>
#include <optional>

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

/// One of PyTorch's param_groups for Adam or AdamW: its parameters and the options it sets
/// for itself; an option left empty takes the optimizer's default. E.g. no decay on biases:
/// `AdamW({{.params = weights}, {.params = biases, .weight_decay = 0.0}}, {.lr = 3e-4})`.
struct AdamParamGroup {
  /// The group's parameters (leaf tensors that require grad), in no other group.
  std::vector<Tensor> params;
  /// @{
  /// The group's own options; empty: the optimizer's.
  std::optional<double> lr{}, beta1{}, beta2{}, eps{}, weight_decay{};
  /// @}
};

namespace detail {
class AdamBase : public Optimizer {
 public:
  AdamBase(std::string_view name, std::vector<Tensor> params, AdamOptions options, bool decoupled)
      : AdamBase(name, std::vector<AdamParamGroup>{{.params = std::move(params)}}, options, decoupled) {}
  AdamBase(std::string_view name, std::vector<AdamParamGroup> groups, AdamOptions defaults, bool decoupled)
      : Optimizer(name, group_params(groups), group_lrs(groups, defaults)),
        group_options_(resolve(name, groups, defaults)),
        options(group_options_.front()),
        name_(name),
        decoupled_(decoupled),
        exp_avg_(parameters().size()),
        exp_avg_sq_(parameters().size()) {}

 private:
  std::vector<AdamOptions> group_options_;  // by group; their lr is where each group started

 public:
  /// The first group's options (of the only group, unless made with groups); the rate in use is
  /// lr(), which schedules change.
  AdamOptions& options;
  /// Param group `group`'s options (its rate in use is lr(group)); lt::Error out of range.
  AdamOptions& group_options(std::size_t group) {
    LT_CHECK(group < group_options_.size(), name_, ": param group ", group, " is out of range for ",
             group_options_.size(), " groups");
    return group_options_[group];
  }

  /// PyTorch's layout: state {i: {"step", "exp_avg", "exp_avg_sq"}} for the parameters that
  /// have moments, and per group lr, betas, eps, weight_decay (and amsgrad, maximize, off).
  OptimizerState state_dict() const override {
    OptimizerState s{{}, groups([&](std::size_t g) {
                       const AdamOptions& o = group_options_[g];
                       return Hyperparameters{{"lr", lr(g)},
                                              {"betas", std::vector<double>{o.beta1, o.beta2}},
                                              {"eps", o.eps},
                                              {"weight_decay", o.weight_decay},
                                              {"amsgrad", false},
                                              {"maximize", false}};
                     })};
    for (std::size_t k = 0; k < exp_avg_.size(); ++k)
      if (exp_avg_[k].defined())
        s.state[static_cast<std::int64_t>(k)] = {
            {"step", detail::step_tensor(steps())}, {"exp_avg", exp_avg_[k].detach()}, {"exp_avg_sq", exp_avg_sq_[k].detach()}};
    return s;
  }
  /// lazytensor counts one step for all parameters, so every "step" must agree.
  void load_state_dict(const OptimizerState& s) override {
    const std::string who(name_);
    detail::check_layout(who, s, parameters(), group_indices(), {"step", "exp_avg", "exp_avg_sq"});
    std::vector<AdamOptions> loaded;
    std::vector<double> lrs;
    for (std::size_t g = 0; g < s.param_groups.size(); ++g) {
      detail::GroupReader r(detail::group_where(who, g), s.param_groups[g].options);
      r.check_keys({"lr", "betas", "eps", "weight_decay"});
      std::vector<double> betas = r.numbers("betas", 2);
      AdamOptions o{.lr = r.number("lr"), .beta1 = betas[0], .beta2 = betas[1], .eps = r.number("eps"),
                    .weight_decay = r.number("weight_decay")};
      check(who, o);
      loaded.push_back(o);
      lrs.push_back(o.lr);
    }
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
    std::copy(loaded.begin(), loaded.end(), group_options_.begin());  // in place: `options` refers to the first
    set_lrs(std::move(lrs));
    set_steps(steps);
    exp_avg_ = std::move(m);
    exp_avg_sq_ = std::move(v);
  }

 protected:
  void update(std::size_t k, Tensor& p, const Tensor& grad) override;  // optim/definitions.hpp

 private:
  static void check(std::string_view name, const AdamOptions& o) {
    LT_CHECK(o.lr >= 0, name, ": the learning rate must not be negative, got ", o.lr);
    LT_CHECK(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1, name, ": betas must be in [0, 1), got ",
             o.beta1, " and ", o.beta2);
    LT_CHECK(o.eps >= 0, name, ": eps must not be negative, got ", o.eps);
    LT_CHECK(o.weight_decay >= 0, name, ": weight_decay must not be negative, got ", o.weight_decay);
  }
  static AdamOptions merged(const AdamParamGroup& g, AdamOptions o) {
    o.lr = g.lr.value_or(o.lr);
    o.beta1 = g.beta1.value_or(o.beta1);
    o.beta2 = g.beta2.value_or(o.beta2);
    o.eps = g.eps.value_or(o.eps);
    o.weight_decay = g.weight_decay.value_or(o.weight_decay);
    return o;
  }
  static std::vector<AdamOptions> resolve(std::string_view name, const std::vector<AdamParamGroup>& groups,
                                          const AdamOptions& defaults) {
    std::vector<AdamOptions> out;
    for (const AdamParamGroup& g : groups) {
      out.push_back(merged(g, defaults));
      check(name, out.back());
    }
    return out;
  }
  static std::vector<std::vector<Tensor>> group_params(const std::vector<AdamParamGroup>& groups) {
    std::vector<std::vector<Tensor>> out;
    for (const AdamParamGroup& g : groups) out.push_back(g.params);
    return out;
  }
  static std::vector<double> group_lrs(const std::vector<AdamParamGroup>& groups, const AdamOptions& defaults) {
    std::vector<double> out;
    for (const AdamParamGroup& g : groups) out.push_back(g.lr.value_or(defaults.lr));
    return out;
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
  /// Optimizes param `groups`, each with its own options where it sets them and `defaults` elsewhere
  /// (PyTorch's param_groups); lt::Error as above, or for a parameter in two groups.
  Adam(std::vector<AdamParamGroup> groups, AdamOptions defaults) : AdamBase("Adam", std::move(groups), defaults, false) {}
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
  /// Optimizes param `groups`, each with its own options where it sets them and `defaults` elsewhere
  /// (PyTorch's param_groups), e.g. weight decay on weights only; lt::Error as above, or for a parameter in
  /// two groups.
  AdamW(std::vector<AdamParamGroup> groups, AdamOptions defaults = AdamWOptions{})
      : AdamBase("AdamW", std::move(groups), defaults, true) {}
};

}  // namespace lt::optim

#pragma once
// Learning-rate schedules: each step() sets the optimizer's rates for the next epoch (or step)
// from a closed form of the count of step() calls and each param group's base rate. The rate
// is a C++ scalar of the plan, so a schedule recompiles nothing (a rate of exactly 0 is folded
// into the graph, as every 0 and 1 scalar: a warmup's first step has a plan of its own).
#include <cmath>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "lazytensor/optim/optimizer.hpp"

namespace lt::optim {

/// A schedule's state in PyTorch's names (base_lrs, last_epoch, _last_lr and the schedule's
/// own parameters).
using SchedulerState = Hyperparameters;

/// What checkpoints need of a schedule: its state, both ways.
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  /// Advances the schedule by one (epoch or step) and sets the optimizer's rate for the next one.
  virtual void step() = 0;
  /// How many times step() has run (PyTorch's last_epoch).
  virtual long last_epoch() const = 0;
  /// The schedule's state in PyTorch's names, for checkpoints.
  virtual SchedulerState state_dict() const = 0;
  /// Restores a state_dict() of a schedule of the same kind; a state that does not fit raises
  /// lt::Error and changes nothing. The optimizer's rate is left to the optimizer's state.
  virtual void load_state_dict(const SchedulerState& state) = 0;
};

namespace detail {
/// The whole, non-negative count a state holds under `key`.
inline long whole_number(std::string_view who, const GroupReader& state, const std::string& key) {
  double v = state.number(key);
  LT_CHECK(v >= 0 && v <= 9.0e15 && v == static_cast<double>(static_cast<long>(v)), who, ".load_state_dict: ", key,
           " must be a whole non-negative number, got ", v);
  return static_cast<long>(v);
}
}  // namespace detail

/// A schedule whose rates are a closed form of the count of step() calls and each param
/// group's base rate (the group's rate when the schedule was made), as PyTorch's schedules
/// over every group of the optimizer.
class ClosedFormLR : public LRScheduler {
 public:
  /// Counts one step and sets every group's rate from the closed form.
  void step() override {
    ++epoch_;
    apply();
  }
  /// How many times step() has run.
  long last_epoch() const override { return epoch_; }
  /// The rate of a group whose base rate is `base_lr`, after `epoch` calls of step().
  virtual double rate(double base_lr, long epoch) const = 0;

  /// The schedule's own parameters and base_lrs, last_epoch, _last_lr, as PyTorch names them.
  SchedulerState state_dict() const override {
    SchedulerState s = parameters();
    std::vector<double> last(opt_.num_param_groups());
    for (std::size_t g = 0; g < last.size(); ++g) last[g] = opt_.lr(g);
    s["base_lrs"] = base_lrs_;
    s["last_epoch"] = static_cast<double>(epoch_);
    s["_last_lr"] = std::move(last);
    return s;
  }
  void load_state_dict(const SchedulerState& state) override {
    const std::string where = std::string(name_) + ".load_state_dict: state";
    detail::GroupReader s(where, state);
    std::vector<std::string_view> keys = parameter_names();
    for (std::string_view k : {"base_lrs", "last_epoch", "_last_lr"}) keys.push_back(k);
    s.check_keys(keys);
    std::vector<double> base = s.numbers("base_lrs", opt_.num_param_groups());
    for (double b : base) LT_CHECK(b >= 0, where, ": base_lrs must not be negative, got ", b);
    long epoch = detail::whole_number(name_, s, "last_epoch");
    load_parameters(s);  // checks all of them before it changes any
    base_lrs_ = std::move(base);
    epoch_ = epoch;
  }

 protected:
  /// `name` (a literal) names the schedule in messages; base rates are `optimizer`'s now.
  ClosedFormLR(std::string_view name, Optimizer& optimizer) : opt_(optimizer), name_(name) {
    for (std::size_t g = 0; g < optimizer.num_param_groups(); ++g) base_lrs_.push_back(optimizer.lr(g));
  }
  /// Sets every group's rate for the current count, as PyTorch's schedules do when made too.
  void apply() {
    for (std::size_t g = 0; g < base_lrs_.size(); ++g) opt_.set_lr(g, rate(base_lrs_[g], epoch_));
  }
  /// The schedule's own parameters, by PyTorch's names.
  virtual SchedulerState parameters() const = 0;
  /// Their names, which a loaded state must hold.
  virtual std::vector<std::string_view> parameter_names() const = 0;
  /// Checks the loaded parameters (lt::Error, changing nothing), then takes them.
  virtual void load_parameters(const detail::GroupReader& state) = 0;
  /// The schedule's name, for messages.
  std::string_view name() const { return name_; }

 private:
  Optimizer& opt_;
  std::string_view name_;
  std::vector<double> base_lrs_;
  long epoch_ = 0;
};

/// lr = base_lr * gamma ^ floor(epoch / step_size).
class StepLR : public ClosedFormLR {
 public:
  /// Decays each group's current rate by `gamma` every `step_size` calls of step(); raises lt::Error for
  /// step_size <= 0.
  StepLR(Optimizer& optimizer, long step_size, double gamma = 0.1)
      : ClosedFormLR("StepLR", optimizer), step_size_(step_size), gamma_(gamma) {
    LT_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
  }
  /// base_lr * gamma ^ floor(epoch / step_size).
  double rate(double base_lr, long epoch) const override {
    return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
  }

 protected:
  SchedulerState parameters() const override {
    return {{"step_size", static_cast<double>(step_size_)}, {"gamma", gamma_}};
  }
  std::vector<std::string_view> parameter_names() const override { return {"step_size", "gamma"}; }
  void load_parameters(const detail::GroupReader& s) override {
    long step_size = detail::whole_number("StepLR", s, "step_size");
    LT_CHECK(step_size > 0, "StepLR.load_state_dict: step_size must be positive, got ", step_size);
    double gamma = s.number("gamma");
    step_size_ = step_size;
    gamma_ = gamma;
  }

 private:
  long step_size_;
  double gamma_;
};

/// Cosine annealing from base_lr down to eta_min over t_max steps:
/// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / t_max)) / 2 (periodic beyond t_max,
/// as PyTorch's closed form).
class CosineAnnealingLR : public ClosedFormLR {
 public:
  /// Anneals each group's current rate down to `eta_min` over `t_max` calls of step(); raises lt::Error for
  /// t_max <= 0 or eta_min < 0.
  CosineAnnealingLR(Optimizer& optimizer, long t_max, double eta_min = 0.0)
      : ClosedFormLR("CosineAnnealingLR", optimizer), t_max_(t_max), eta_min_(eta_min) {
    LT_CHECK(t_max > 0, "CosineAnnealingLR: t_max must be positive, got ", t_max);
    LT_CHECK(eta_min >= 0, "CosineAnnealingLR: eta_min must not be negative, got ", eta_min);
  }
  /// eta_min + (base_lr - eta_min) * (1 + cos(pi * t / t_max)) / 2.
  double rate(double base_lr, long t) const override {
    double c = std::cos(std::numbers::pi * static_cast<double>(t) / static_cast<double>(t_max_));
    return eta_min_ + (base_lr - eta_min_) * (1 + c) / 2;
  }

 protected:
  SchedulerState parameters() const override { return {{"T_max", static_cast<double>(t_max_)}, {"eta_min", eta_min_}}; }
  std::vector<std::string_view> parameter_names() const override { return {"T_max", "eta_min"}; }
  void load_parameters(const detail::GroupReader& s) override {
    long t_max = detail::whole_number("CosineAnnealingLR", s, "T_max");
    double eta_min = s.number("eta_min");
    LT_CHECK(t_max > 0 && eta_min >= 0, "CosineAnnealingLR.load_state_dict: T_max must be positive and eta_min not "
             "negative, got ", t_max, " and ", eta_min);
    t_max_ = t_max;
    eta_min_ = eta_min;
  }

 private:
  long t_max_;
  double eta_min_;
};

}  // namespace lt::optim

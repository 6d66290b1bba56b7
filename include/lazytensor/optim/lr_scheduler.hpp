#pragma once
// Learning-rate schedules: each step() sets the optimizer's rate for the next epoch (or step)
// from a closed form of the count of step() calls. The rate is a C++ scalar of the plan, so
// a schedule recompiles nothing.
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

/// lr = base_lr * gamma ^ floor(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  /// Decays `optimizer`'s current rate by `gamma` every `step_size` calls of step(); raises lt::Error for
  /// step_size <= 0.
  StepLR(Optimizer& optimizer, long step_size, double gamma = 0.1)
      : opt_(optimizer), base_lr_(optimizer.lr()), step_size_(step_size), gamma_(gamma) {
    LT_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
  }
  /// Counts one epoch and sets the rate from the closed form.
  void step() override {
    ++epoch_;
    opt_.set_lr(base_lr_ * std::pow(gamma_, static_cast<double>(epoch_ / step_size_)));
  }
  /// How many times step() has run.
  long last_epoch() const override { return epoch_; }

  /// base_lrs, last_epoch, _last_lr, step_size and gamma, as PyTorch names them.
  SchedulerState state_dict() const override {
    return {{"step_size", static_cast<double>(step_size_)},
            {"gamma", gamma_},
            {"base_lrs", std::vector<double>{base_lr_}},
            {"last_epoch", static_cast<double>(epoch_)},
            {"_last_lr", std::vector<double>{opt_.lr()}}};
  }
  void load_state_dict(const SchedulerState& state) override {
    detail::GroupReader s("StepLR.load_state_dict: state", state);
    s.check_keys({"step_size", "gamma", "base_lrs", "last_epoch", "_last_lr"});
    long step_size = detail::whole_number("StepLR", s, "step_size");
    LT_CHECK(step_size > 0, "StepLR.load_state_dict: step_size must be positive, got ", step_size);
    double gamma = s.number("gamma"), base_lr = s.numbers("base_lrs", 1)[0];
    long epoch = detail::whole_number("StepLR", s, "last_epoch");
    step_size_ = step_size;
    gamma_ = gamma;
    base_lr_ = base_lr;
    epoch_ = epoch;
  }

 private:
  Optimizer& opt_;
  double base_lr_;
  long step_size_;
  double gamma_;
  long epoch_ = 0;
};

/// Cosine annealing from base_lr down to eta_min over t_max steps:
/// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / t_max)) / 2 (periodic beyond t_max,
/// as PyTorch's closed form).
class CosineAnnealingLR : public LRScheduler {
 public:
  /// Anneals `optimizer`'s current rate down to `eta_min` over `t_max` calls of step(); raises lt::Error for
  /// t_max <= 0 or eta_min < 0.
  CosineAnnealingLR(Optimizer& optimizer, long t_max, double eta_min = 0.0)
      : opt_(optimizer), base_lr_(optimizer.lr()), t_max_(t_max), eta_min_(eta_min) {
    LT_CHECK(t_max > 0, "CosineAnnealingLR: t_max must be positive, got ", t_max);
    LT_CHECK(eta_min >= 0, "CosineAnnealingLR: eta_min must not be negative, got ", eta_min);
  }
  /// Counts one step and sets the rate from the closed form.
  void step() override {
    ++t_;
    double c = std::cos(std::numbers::pi * static_cast<double>(t_) / static_cast<double>(t_max_));
    opt_.set_lr(eta_min_ + (base_lr_ - eta_min_) * (1 + c) / 2);
  }
  /// How many times step() has run.
  long last_epoch() const override { return t_; }

  /// base_lrs, last_epoch, _last_lr, T_max and eta_min, as PyTorch names them.
  SchedulerState state_dict() const override {
    return {{"T_max", static_cast<double>(t_max_)},
            {"eta_min", eta_min_},
            {"base_lrs", std::vector<double>{base_lr_}},
            {"last_epoch", static_cast<double>(t_)},
            {"_last_lr", std::vector<double>{opt_.lr()}}};
  }
  void load_state_dict(const SchedulerState& state) override {
    detail::GroupReader s("CosineAnnealingLR.load_state_dict: state", state);
    s.check_keys({"T_max", "eta_min", "base_lrs", "last_epoch", "_last_lr"});
    long t_max = detail::whole_number("CosineAnnealingLR", s, "T_max");
    double eta_min = s.number("eta_min"), base_lr = s.numbers("base_lrs", 1)[0];
    LT_CHECK(t_max > 0 && eta_min >= 0, "CosineAnnealingLR.load_state_dict: T_max must be positive and eta_min not "
             "negative, got ", t_max, " and ", eta_min);
    long t = detail::whole_number("CosineAnnealingLR", s, "last_epoch");
    t_max_ = t_max;
    eta_min_ = eta_min;
    base_lr_ = base_lr;
    t_ = t;
  }

 private:
  Optimizer& opt_;
  double base_lr_;
  long t_max_;
  double eta_min_;
  long t_ = 0;
};

}  // namespace lt::optim

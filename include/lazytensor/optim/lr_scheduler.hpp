#pragma once
// Learning-rate schedules: each step() sets the optimizer's rate for the next epoch (or step)
// from a closed form of the count of step() calls. The rate is a C++ scalar of the plan, so
// a schedule recompiles nothing.
#include <cmath>
#include <numbers>

#include "lazytensor/optim/optimizer.hpp"

namespace lt::optim {

/// lr = base_lr * gamma ^ floor(epoch / step_size).
class StepLR {
 public:
  StepLR(Optimizer& optimizer, long step_size, double gamma = 0.1)
      : opt_(optimizer), base_lr_(optimizer.lr()), step_size_(step_size), gamma_(gamma) {
    LT_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
  }
  void step() {
    ++epoch_;
    opt_.set_lr(base_lr_ * std::pow(gamma_, static_cast<double>(epoch_ / step_size_)));
  }
  long last_epoch() const { return epoch_; }

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
class CosineAnnealingLR {
 public:
  CosineAnnealingLR(Optimizer& optimizer, long t_max, double eta_min = 0.0)
      : opt_(optimizer), base_lr_(optimizer.lr()), t_max_(t_max), eta_min_(eta_min) {
    LT_CHECK(t_max > 0, "CosineAnnealingLR: t_max must be positive, got ", t_max);
    LT_CHECK(eta_min >= 0, "CosineAnnealingLR: eta_min must not be negative, got ", eta_min);
  }
  void step() {
    ++t_;
    double c = std::cos(std::numbers::pi * static_cast<double>(t_) / static_cast<double>(t_max_));
    opt_.set_lr(eta_min_ + (base_lr_ - eta_min_) * (1 + c) / 2);
  }
  long last_epoch() const { return t_; }

 private:
  Optimizer& opt_;
  double base_lr_;
  long t_max_;
  double eta_min_;
  long t_ = 0;
};

}  // namespace lt::optim

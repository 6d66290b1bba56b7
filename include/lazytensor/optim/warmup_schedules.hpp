#pragma once
// Hugging Face's schedules with a linear warmup: each group's rate rises linearly from 0 over
// the warmup steps, then decays linearly or along a cosine to 0 at the last training step.
// Made by get_linear_schedule_with_warmup and get_cosine_schedule_with_warmup, which set the
// rates of step 0 at once (as PyTorch's LambdaLR does when made).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "lazytensor/optim/lr_scheduler.hpp"

namespace lt::optim {

/// lr = base_lr * f(t): t / warmup during the warmup, then (total - t) / (total - warmup) down
/// to 0 (linear), or 0.5 * (1 + cos(pi * 2 * num_cycles * progress)) with progress =
/// (t - warmup) / (total - warmup) (cosine); never below 0. Hugging Face's lambdas exactly.
class ScheduleWithWarmup : public ClosedFormLR {
 public:
  /// The decay after the warmup.
  enum class Decay { linear, cosine };

  /// Sets each group's rate for step 0 (0 unless num_warmup_steps is 0). lt::Error for a
  /// negative count or a non-finite num_cycles.
  ScheduleWithWarmup(Optimizer& optimizer, Decay decay, long num_warmup_steps, long num_training_steps,
                     double num_cycles = 0.5)
      : ClosedFormLR(decay == Decay::linear ? "LinearScheduleWithWarmup" : "CosineScheduleWithWarmup", optimizer),
        decay_(decay),
        warmup_(num_warmup_steps),
        total_(num_training_steps),
        cycles_(num_cycles) {
    check(name(), warmup_, total_, cycles_);
    apply();
  }

  /// The multiplier of step t applied to base_lr.
  double factor(long t) const {
    if (t < warmup_) return static_cast<double>(t) / static_cast<double>(std::max(1L, warmup_));
    double after = static_cast<double>(t - warmup_), span = static_cast<double>(std::max(1L, total_ - warmup_));
    if (decay_ == Decay::linear) return std::max(0.0, static_cast<double>(total_ - t) / span);
    return std::max(0.0, 0.5 * (1.0 + std::cos(std::numbers::pi * cycles_ * 2.0 * (after / span))));
  }
  /// base_lr * factor(t).
  double rate(double base_lr, long t) const override { return base_lr * factor(t); }

 protected:
  SchedulerState parameters() const override {
    SchedulerState s{{"num_warmup_steps", static_cast<double>(warmup_)},
                     {"num_training_steps", static_cast<double>(total_)}};
    if (decay_ == Decay::cosine) s["num_cycles"] = cycles_;
    return s;
  }
  std::vector<std::string_view> parameter_names() const override {
    if (decay_ == Decay::cosine) return {"num_warmup_steps", "num_training_steps", "num_cycles"};
    return {"num_warmup_steps", "num_training_steps"};
  }
  void load_parameters(const detail::GroupReader& s) override {
    long warmup = detail::whole_number(name(), s, "num_warmup_steps");
    long total = detail::whole_number(name(), s, "num_training_steps");
    double cycles = decay_ == Decay::cosine ? s.number("num_cycles") : 0.5;
    check(name(), warmup, total, cycles);
    warmup_ = warmup;
    total_ = total;
    cycles_ = cycles;
  }

 private:
  static void check(std::string_view who, long warmup, long total, double cycles) {
    LT_CHECK(warmup >= 0 && total >= 0, who, ": num_warmup_steps and num_training_steps must not be negative, got ",
             warmup, " and ", total);
    LT_CHECK(std::isfinite(cycles), who, ": num_cycles must be finite, got ", cycles);
  }

  Decay decay_;
  long warmup_, total_;
  double cycles_;
};

/// Hugging Face's get_linear_schedule_with_warmup: each group's rate rises linearly from 0 to
/// its base rate over `num_warmup_steps` calls of step(), then falls linearly to 0 at
/// `num_training_steps`. Sets the rates of step 0 at once.
inline ScheduleWithWarmup get_linear_schedule_with_warmup(Optimizer& optimizer, long num_warmup_steps,
                                                          long num_training_steps) {
  return ScheduleWithWarmup(optimizer, ScheduleWithWarmup::Decay::linear, num_warmup_steps, num_training_steps);
}

/// Hugging Face's get_cosine_schedule_with_warmup: a linear warmup over `num_warmup_steps`,
/// then a cosine from the base rate down to 0 over `num_cycles` periods (0.5: one half-wave
/// ending at `num_training_steps`). Sets the rates of step 0 at once.
inline ScheduleWithWarmup get_cosine_schedule_with_warmup(Optimizer& optimizer, long num_warmup_steps,
                                                          long num_training_steps, double num_cycles = 0.5) {
  return ScheduleWithWarmup(optimizer, ScheduleWithWarmup::Decay::cosine, num_warmup_steps, num_training_steps,
                            num_cycles);
}

}  // namespace lt::optim

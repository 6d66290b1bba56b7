// Hugging Face's warmup schedules against their formulas, over several param groups; their
// state; and that a schedule compiles nothing over a training run.
#include <cmath>
#include <numbers>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

// Hugging Face's lambdas (transformers/optimization.py), written out.
double hf_linear(long t, long warmup, long total) {
  if (t < warmup) return double(t) / double(std::max(1L, warmup));
  return std::max(0.0, double(total - t) / double(std::max(1L, total - warmup)));
}
double hf_cosine(long t, long warmup, long total, double cycles) {
  if (t < warmup) return double(t) / double(std::max(1L, warmup));
  double progress = double(t - warmup) / double(std::max(1L, total - warmup));
  return std::max(0.0, 0.5 * (1.0 + std::cos(std::numbers::pi * cycles * 2.0 * progress)));
}

struct TwoGroups {
  Tensor w = ones({3}).requires_grad_(), b = ones({1}).requires_grad_();
  optim::AdamW opt{{{.params = {w}}, {.params = {b}, .lr = 0.2}}, {.lr = 0.5}};
};

TEST(NnSchedule, LinearWithWarmupMatchesTheFormulaInEveryGroup) {
  for (auto [warmup, total] : {std::pair{3L, 10L}, std::pair{0L, 5L}, std::pair{4L, 4L}, std::pair{0L, 0L}}) {
    SCOPED_TRACE(testing::Message() << "warmup " << warmup << " total " << total);
    TwoGroups m;
    auto schedule = optim::get_linear_schedule_with_warmup(m.opt, warmup, total);
    for (long t = 0; t <= total + 2; ++t) {
      if (t > 0) schedule.step();
      EXPECT_EQ(schedule.last_epoch(), t);
      EXPECT_DOUBLE_EQ(m.opt.lr(0), 0.5 * hf_linear(t, warmup, total)) << "step " << t;
      EXPECT_DOUBLE_EQ(m.opt.lr(1), 0.2 * hf_linear(t, warmup, total)) << "step " << t;
    }
  }
}

TEST(NnSchedule, CosineWithWarmupMatchesTheFormulaInEveryGroup) {
  for (double cycles : {0.5, 1.0, 2.25})
    for (long warmup : {0L, 2L}) {
      SCOPED_TRACE(testing::Message() << "cycles " << cycles << " warmup " << warmup);
      TwoGroups m;
      auto schedule = optim::get_cosine_schedule_with_warmup(m.opt, warmup, 12, cycles);
      for (long t = 0; t <= 14; ++t) {
        if (t > 0) schedule.step();
        EXPECT_NEAR(m.opt.lr(0), 0.5 * hf_cosine(t, warmup, 12, cycles), 1e-15) << "step " << t;
        EXPECT_NEAR(m.opt.lr(1), 0.2 * hf_cosine(t, warmup, 12, cycles), 1e-15) << "step " << t;
      }
    }
  TwoGroups m;
  auto half = optim::get_cosine_schedule_with_warmup(m.opt, 0, 4);  // the default: one half-wave to 0
  for (int t = 0; t < 4; ++t) half.step();
  EXPECT_NEAR(m.opt.lr(0), 0.0, 1e-16);
}

TEST(NnSchedule, StepLRScalesEachGroupsBaseRate) {
  TwoGroups m;
  optim::StepLR step(m.opt, 2, 0.5);
  for (int e = 0; e < 4; ++e) step.step();
  EXPECT_DOUBLE_EQ(m.opt.lr(0), 0.125);
  EXPECT_DOUBLE_EQ(m.opt.lr(1), 0.05);
}

TEST(NnSchedule, StateRoundTripsAndBadStatesChangeNothing) {
  TwoGroups a;
  auto sa = optim::get_cosine_schedule_with_warmup(a.opt, 3, 20, 0.75);
  for (int t = 0; t < 7; ++t) sa.step();
  optim::SchedulerState state = sa.state_dict();
  EXPECT_EQ(std::get<double>(state.at("last_epoch")), 7.0);
  EXPECT_EQ(std::get<std::vector<double>>(state.at("base_lrs")), (std::vector<double>{0.5, 0.2}));
  EXPECT_EQ(std::get<double>(state.at("num_cycles")), 0.75);

  TwoGroups b;
  auto sb = optim::get_cosine_schedule_with_warmup(b.opt, 0, 5);
  sb.load_state_dict(state);
  sa.step();
  sb.step();
  EXPECT_DOUBLE_EQ(b.opt.lr(0), a.opt.lr(0));
  EXPECT_DOUBLE_EQ(b.opt.lr(1), a.opt.lr(1));
  EXPECT_EQ(sb.last_epoch(), 8);

  optim::SchedulerState bad = state;
  bad["num_warmup_steps"] = -1.0;
  EXPECT_THROW(sb.load_state_dict(bad), Error);
  bad = state;
  bad["base_lrs"] = std::vector<double>{0.5};  // one group; the optimizer has two
  EXPECT_THROW(sb.load_state_dict(bad), Error);
  bad = state;
  bad["extra"] = 1.0;
  EXPECT_THROW(sb.load_state_dict(bad), Error);
  auto linear = optim::get_linear_schedule_with_warmup(b.opt, 1, 5);
  EXPECT_THROW(linear.load_state_dict(state), Error) << "a cosine's state has num_cycles";
  EXPECT_EQ(sb.last_epoch(), 8) << "a refused state changes nothing";
  sa.step();
  sb.step();
  EXPECT_DOUBLE_EQ(b.opt.lr(0), a.opt.lr(0));
}

TEST(NnSchedule, RejectsBadArguments) {
  TwoGroups m;
  EXPECT_THROW(optim::get_linear_schedule_with_warmup(m.opt, -1, 10), Error);
  EXPECT_THROW(optim::get_linear_schedule_with_warmup(m.opt, 1, -10), Error);
  EXPECT_THROW(optim::get_cosine_schedule_with_warmup(m.opt, 1, 10, std::nan("")), Error);
  EXPECT_THROW(m.opt.set_lr(2, 0.1), Error);
  EXPECT_THROW(m.opt.set_lr(0, -0.1), Error);
}

TEST(NnSchedule, AWarmupRunCompilesNothingAfterItsFirstTwoSteps) {
  // Step 0 runs at rate 0, which the graph folds (as every 0 and 1 scalar): a plan of its own.
  // From step 1 on the rate is a value of one plan through the warmup and the decay.
  Device dev = device();
  Tensor w = from_vector(std::vector<double>{0.5, -1.0, 2.0}, {3}, dev).requires_grad_();
  Tensor b = zeros({1}, dev, f64).requires_grad_();
  optim::AdamW opt({{.params = {w}}, {.params = {b}, .weight_decay = 0.0}}, {.lr = 0.1, .weight_decay = 0.01});
  const long total = 12;
  auto schedule = optim::get_linear_schedule_with_warmup(opt, 4, total);
  auto step = [&] {
    opt.zero_grad();
    Tensor(((w * w).sum() + b.sum()) * 0.5).backward();
    nn::utils::clip_grad_norm_({w, b}, 1.0);
    opt.step();
    schedule.step();
    sync(dev);
  };
  step();
  step();
  wait_device_ops();
  std::int64_t compiles = metrics::counter("UncachedCompile");
  {
    expect_cached guard;
    for (long t = 2; t < total; ++t) {
      step();
      EXPECT_EQ(metrics::counter("UncachedCompile"), compiles) << "step " << t;
    }
    wait_device_ops();
  }
  EXPECT_DOUBLE_EQ(opt.lr(0), 0.0);  // the rate after the last training step
}

}  // namespace
}  // namespace lt::test

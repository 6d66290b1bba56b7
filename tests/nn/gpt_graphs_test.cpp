// The GPT example's model (examples/gpt_model.hpp), small, through a run as the example's:
// training steps with AdamW, a warm-up schedule and clipping, evaluation, generation, more
// training. It compiles three graphs: the training step, the evaluation and generation.
#include "../../examples/gpt_model.hpp"
#include "nn_test_util.hpp"

namespace lt::test {
namespace {

Tensor byte_ids(std::int64_t rows, std::int64_t cols, std::int64_t seed, Device dev) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < rows * cols; ++i) v.push_back((i * 37 + seed * 11) % 256);
  return from_vector(v, {rows, cols}).to(dev);
}

TEST(NnGptGraphs, ARunCompilesATrainingAnEvaluationAndAGenerationGraph) {
  manual_seed(71);
  const GptConfig c{.context = 8, .d_model = 16, .heads = 2, .layers = 2, .dropout = 0.1};
  const Device dev = device();
  Gpt model(c);
  model.to(dev);
  optim::AdamW opt(model.param_groups(0.1), optim::AdamOptions{.lr = 1e-2});
  auto schedule = optim::get_linear_schedule_with_warmup(opt, 3, 21);
  schedule.step();  // begun one step in, as the example: step 0's rate would be 0
  wait_device_ops();
  metrics::reset();
  std::vector<float> losses;
  auto train = [&](int steps) {
    for (int s = 0; s < steps; ++s) {
      Tensor loss = gpt_train_step(model, opt, schedule, byte_ids(4, c.context, s, dev), byte_ids(4, c.context, s + 1, dev));
      sync();
      losses.push_back(loss.item<float>());
    }
  };
  auto evaluate = [&] {
    model.eval();
    no_grad guard;
    for (int b = 0; b < 2; ++b) {
      Tensor loss = gpt_loss(model, byte_ids(4, c.context, 50 + b, dev), byte_ids(4, c.context, 51 + b, dev));
      sync();
      EXPECT_TRUE(std::isfinite(loss.item<float>()));
    }
    model.train();
  };
  auto generate = [&] {
    model.eval();
    no_grad guard;
    for (std::int64_t at = 0; at < c.context; ++at) {
      Tensor pos = from_vector(std::vector<std::int64_t>{at}, {1}).to(dev);
      Tensor logits = gpt_next_logits(model, byte_ids(1, c.context, at, dev), pos);
      EXPECT_EQ(logits.to_vector<float>().size(), 256u);
    }
    model.train();
  };
  train(6);
  evaluate();
  generate();
  wait_device_ops();
  const std::int64_t first_run = metrics::counter("UncachedCompile");
  EXPECT_LE(first_run, 3);
  train(4);  // the schedule's rate and AdamW's step count change; the graphs do not
  evaluate();
  generate();
  wait_device_ops();
  EXPECT_EQ(metrics::counter("UncachedCompile"), first_run);
  for (float l : losses) EXPECT_TRUE(std::isfinite(l));
  EXPECT_LT(losses.back(), losses.front());
}

TEST(NnGptGraphs, TheNextLogitsAreThoseOfTheFullForwardAtThatPosition) {
  manual_seed(72);
  Gpt model({.context = 6, .d_model = 8, .heads = 2, .layers = 1, .dropout = 0.0});
  model.to(f64);
  model.eval();
  Tensor window = byte_ids(1, 6, 3, cpu);
  std::vector<double> all = values(model(window));
  for (std::int64_t at : {0, 3, 5}) {
    std::vector<double> row(all.begin() + at * 256, all.begin() + (at + 1) * 256);
    expect_values_near(gpt_next_logits(model, window, from_vector(std::vector<std::int64_t>{at}, {1})), row, 1e-12);
  }
  // Causal: bytes after `at` do not change its logits.
  std::vector<std::int64_t> changed = window.to_vector<std::int64_t>();
  changed[5] = (changed[5] + 1) % 256;
  std::vector<double> again = values(model(from_vector(changed, {1, 6})));
  for (std::size_t i = 0; i < 5 * 256; ++i) EXPECT_NEAR(again[i], all[i], 1e-12) << i;
}

}  // namespace
}  // namespace lt::test

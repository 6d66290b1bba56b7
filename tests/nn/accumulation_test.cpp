// Gradient accumulation over micro-batches, a barrier per micro-step: the same gradients as
// one batch four times the size, and one graph for every micro-step.
#include "nn_test_util.hpp"

namespace lt::test {
namespace {

struct Mlp : nn::Module {
  nn::Linear fc1{6, 8}, fc2{8, 3};
  Mlp() { LT_REGISTER_MODULES(fc1, fc2); }
  Tensor forward(const Tensor& x) const { return fc2(tanh(fc1(x))); }
};

TEST(NnAccumulation, FourMicroBatchesEqualOneBatchAndCompileOnce) {
  constexpr std::int64_t micro = 4, rows = 5;
  manual_seed(61);
  Mlp model;
  model.to(f64);
  Device dev = device();
  model.to(dev);
  Tensor x_host = uniform_f64({micro * rows, 6}, 62), x = x_host.to(dev);
  std::vector<std::int64_t> labels;
  for (std::int64_t i = 0; i < micro * rows; ++i) labels.push_back((i * 7) % 3);
  Tensor y_host = from_vector(labels, {micro * rows}), y = y_host.to(dev);
  // Each micro-batch is data of its own on the device, as a loader's: a narrow of the lazy
  // batch would put its offset into the graph.
  std::vector<Tensor> xs, ys;
  for (std::int64_t m = 0; m < micro; ++m) {
    xs.push_back(x_host.narrow(0, m * rows, rows).to(dev));
    ys.push_back(y_host.narrow(0, m * rows, rows).to(dev));
  }
  auto loss_of = [&](const Tensor& xs, const Tensor& ys) { return nn::functional::cross_entropy(model.forward(xs), ys); };

  // One batch of micro * rows.
  loss_of(x, y).backward();
  sync();
  std::vector<std::vector<double>> whole;
  for (const Tensor& p : model.parameters()) whole.push_back(values(p.grad()));

  // zero_grad(set_to_none = false) keeps the gradients as tensors of the step, so every
  // micro-step adds to data and records the same graph.
  optim::SGD opt(model.parameters(), {.lr = 0.1});
  for (int round = 0; round < 2; ++round) {
    wait_device_ops();
    const std::int64_t round_start = metrics::counter("UncachedCompile");
    opt.zero_grad(false);
    sync();
    wait_device_ops();
    std::int64_t after_first = 0;
    for (std::int64_t m = 0; m < micro; ++m) {
      Tensor loss = loss_of(xs[m], ys[m]) / micro;
      loss.backward();
      sync();
      wait_device_ops();
      if (m == 0) after_first = metrics::counter("UncachedCompile");
    }
    EXPECT_EQ(metrics::counter("UncachedCompile"), after_first) << "a micro-step after the first compiled, round " << round;
    std::size_t k = 0;
    for (const Tensor& p : model.parameters()) expect_values_near(p.grad(), whole[k++], 1e-12);
    // The second round compiles nothing at all: the zeroing and the micro-step are cached.
    if (round == 1) EXPECT_EQ(metrics::counter("UncachedCompile"), round_start);
  }
}

}  // namespace
}  // namespace lt::test

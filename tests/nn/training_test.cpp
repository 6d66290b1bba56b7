// A training loop of the MNIST CNN on fake data: few distinct graphs, every later step cached,
// and the loss goes down.
#include <lazytensor/data.hpp>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

struct Net : nn::Module {
  nn::Conv2d conv1{1, 10, 5}, conv2{10, 20, 5};
  nn::BatchNorm2d bn1{10}, bn2{20};
  nn::Linear fc1{320, 50}, fc2{50, 10};
  Net() { LT_REGISTER_MODULES(conv1, bn1, conv2, bn2, fc1, fc2); }
  Tensor forward(const Tensor& input) {
    Tensor x = bn1(relu(max_pool2d(conv1(input), 2)));
    x = bn2(relu(max_pool2d(conv2(x), 2)));
    x = relu(fc1(x.flatten(1)));
    return log_softmax(fc2(x), 1);
  }
};

TEST(NnTraining, MnistLoopCompilesAtMostThreeGraphs) {
  manual_seed(0);
  Device dev = device();
  Net model;
  model.to(dev);
  optim::SGD opt(model.parameters(), {.lr = 0.01, .momentum = 0.5});
  wait_device_ops();
  metrics::reset();
  constexpr int steps = 6;
  std::vector<std::int64_t> uncached_before;  // graphs compiled by the steps before each step
  std::vector<Tensor> losses;
  for (auto [data, target] : data::DeviceLoader(data::fake_data({32, 1, 28, 28}, 10, steps, 1), dev)) {
    uncached_before.push_back(metrics::counter("UncachedCompile"));  // waits for the previous steps
    opt.zero_grad();
    Tensor loss = nn::functional::nll_loss(model.forward(data), target);
    loss.backward();
    opt.step();
    losses.push_back(loss);  // read after the loop: a read inside the step would run part of it
  }
  wait_device_ops();
  ASSERT_EQ(losses.size(), static_cast<std::size_t>(steps));
  std::int64_t uncached = metrics::counter("UncachedCompile");
  EXPECT_LE(uncached, 3);
  // From the third step on, nothing compiles: each step's graph is a cache hit.
  EXPECT_EQ(uncached, uncached_before[2]);
  EXPECT_EQ(metrics::counter("CachedCompile"), steps - uncached);
  EXPECT_LT(losses.back().item<float>(), losses.front().item<float>());
}

}  // namespace
}  // namespace lt::test

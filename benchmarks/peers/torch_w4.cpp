// W4 with LibTorch eager: one training step of the MNIST CNN, batch 128, written with
// torch::nn modules and torch::optim::SGD (lr 0.01, momentum 0.5), at 2 and 1 threads.
//
//   bench_torch_w4 [--quick]
#include <cstdio>
#include <cstring>

#include <torch/torch.h>

#include "common/timing.hpp"

namespace {

struct NetImpl : torch::nn::Module {
  torch::nn::Conv2d conv1{torch::nn::Conv2dOptions(1, 10, 5)}, conv2{torch::nn::Conv2dOptions(10, 20, 5)};
  torch::nn::BatchNorm2d bn1{10}, bn2{20};
  torch::nn::Linear fc1{320, 50}, fc2{50, 10};
  NetImpl() {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("bn2", bn2);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = bn1(torch::relu(torch::max_pool2d(conv1(x), 2)));
    x = bn2(torch::relu(torch::max_pool2d(conv2(x), 2)));
    x = torch::relu(fc1(x.flatten(1)));
    return torch::log_softmax(fc2(x), 1);
  }
};
TORCH_MODULE(Net);

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 5 : 31;
  torch::manual_seed(0);
  Net model;
  model->train();
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
  torch::Tensor x = torch::randn({128, 1, 28, 28});
  torch::Tensor target = torch::randint(10, {128}, torch::kLong);
  auto step = [&] {
    opt.zero_grad();
    torch::Tensor loss = torch::nll_loss(model->forward(x), target);
    loss.backward();
    opt.step();
    bench::keep(loss);
  };
  std::printf("W4 LibTorch %s eager, MNIST CNN training step, batch 128 (median of %d steps)\n", TORCH_VERSION, reps);
  for (int threads : {2, 1}) {
    at::set_num_threads(threads);
    double t = bench::median_seconds(step, reps, 2);
    std::printf("  %d thread%s: %.2f ms per step\n", threads, threads > 1 ? "s" : "", 1e3 * t);
  }
}

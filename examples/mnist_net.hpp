#pragma once
// The seeds' MNIST CNN, shared by examples/mnist.cpp and the W4 benchmark: conv 1->10 k5,
// max_pool 2, relu, BatchNorm2d, conv 10->20 k5, max_pool 2, relu, BatchNorm2d, flatten 320,
// fc 320->50, relu, fc 50->10, log_softmax.
#include <lazytensor/nn.hpp>

struct MnistNet : lt::nn::Module {
  lt::nn::Conv2d conv1{1, 10, 5}, conv2{10, 20, 5};
  lt::nn::BatchNorm2d bn1{10}, bn2{20};
  lt::nn::Linear fc1{320, 50}, fc2{50, 10};

  MnistNet() { LT_REGISTER_MODULES(conv1, bn1, conv2, bn2, fc1, fc2); }

  lt::Tensor forward(const lt::Tensor& input) {
    lt::Tensor x = bn1(lt::relu(lt::max_pool2d(conv1(input), 2)));
    x = bn2(lt::relu(lt::max_pool2d(conv2(x), 2)));
    x = lt::relu(fc1(x.flatten(1)));
    return lt::log_softmax(fc2(x), 1);
  }
};

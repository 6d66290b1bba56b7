#pragma once
// lt::nn::functional: the stateless forms of the layers (the library's own functions) and the
// losses, under PyTorch's torch.nn.functional names.
#include "lazytensor/nn/functional/attention.hpp"
#include "lazytensor/nn/functional/loss.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"
#include "lazytensor/trace/functions/movement.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn::functional {
using ::lt::adaptive_avg_pool2d;
using ::lt::avg_pool2d;
using ::lt::batch_norm;
using ::lt::conv2d;
using ::lt::dropout;
using ::lt::embedding;
using ::lt::gelu;
using ::lt::layer_norm;
using ::lt::linear;
using ::lt::log_softmax;
using ::lt::max_pool2d;
using ::lt::one_hot;
using ::lt::relu;
using ::lt::sigmoid;
using ::lt::softmax;
using ::lt::tanh;
}  // namespace lt::nn::functional

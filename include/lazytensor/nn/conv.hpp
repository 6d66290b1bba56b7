#pragma once
// Conv2d over [N, C, H, W] or [C, H, W] inputs.
#include "lazytensor/nn/init.hpp"
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn {

/// Options of Conv2d, as PyTorch's keyword arguments; a Pair2 is one value or {h, w}.
struct Conv2dOptions {
  /// @{
  /// Stride, zero padding on each side, and dilation of the kernel, per spatial dim.
  Pair2 stride = 1, padding = 0, dilation = 1;
  /// @}
  /// Input and output channels are split into this many groups, each convolved on its own.
  std::int64_t groups = 1;
  /// Whether the layer adds a learned bias per output channel.
  bool bias = true;
};

/// 2-D convolution over [N, C, H, W] or [C, H, W], as torch.nn.Conv2d.
class Conv2d : public Callable<Conv2d> {
 public:
  /// Weight and bias start uniform in ±1/sqrt(fan_in), as in PyTorch; raises lt::Error for sizes that do not
  /// divide by `groups`.
  Conv2d(std::int64_t in_channels, std::int64_t out_channels, Pair2 kernel_size, Conv2dOptions options = {})
      : options(options) {
    LT_CHECK(in_channels > 0 && out_channels > 0 && kernel_size.h > 0 && kernel_size.w > 0,
             "Conv2d: channels and kernel size must be positive, got ", in_channels, " -> ", out_channels, ", kernel ",
             kernel_size.h, "x", kernel_size.w);
    LT_CHECK(options.groups > 0 && in_channels % options.groups == 0 && out_channels % options.groups == 0,
             "Conv2d: groups (", options.groups, ") must divide in_channels (", in_channels, ") and out_channels (",
             out_channels, ")");
    std::int64_t fan_in = in_channels / options.groups * kernel_size.h * kernel_size.w;
    weight = init::fan_in_uniform({out_channels, in_channels / options.groups, kernel_size.h, kernel_size.w}, fan_in);
    if (options.bias) bias = init::fan_in_uniform({out_channels}, fan_in);
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }

  /// conv2d(x, weight, bias) with this layer's options.
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    std::optional<Tensor> b;
    if (bias.defined()) b = bias;
    return conv2d(x, weight, b, options.stride, options.padding, options.dilation, options.groups);
  }

  /// The options it was made with.
  Conv2dOptions options;
  /// @{
  /// The kernel [out, in / groups, kh, kw] and the bias [out] (undefined without bias).
  Tensor weight, bias;  // [out, in / groups, kh, kw], [out]
  /// @}
};

}  // namespace lt::nn

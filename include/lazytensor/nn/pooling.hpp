#pragma once
// MaxPool2d and AvgPool2d over [N, C, H, W] or [C, H, W]; the stride defaults to the kernel.
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn {

/// Options of MaxPool2d, as PyTorch's keyword arguments.
struct MaxPool2dOptions {
  /// The window's step; the kernel size when unset.
  std::optional<Pair2> stride;
  /// @{
  /// Implicit padding (-inf) on each side, and the spacing of the window's elements.
  Pair2 padding = 0, dilation = 1;
  /// @}
  /// Whether the output size rounds up rather than down.
  bool ceil_mode = false;
};

/// Max pooling as a module, as torch.nn.MaxPool2d.
class MaxPool2d : public Callable<MaxPool2d> {
 public:
  /// A pool with window `kernel_size` (one value or {h, w}).
  explicit MaxPool2d(Pair2 kernel_size, MaxPool2dOptions options = {}) : kernel_size(kernel_size), options(options) {}
  /// max_pool2d(x, kernel_size, ...) with this module's options.
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    return max_pool2d(x, kernel_size, options.stride, options.padding, options.dilation, options.ceil_mode);
  }

  /// The window size.
  Pair2 kernel_size;
  /// The options it was made with.
  MaxPool2dOptions options;
};

/// Options of AvgPool2d, as PyTorch's keyword arguments.
struct AvgPool2dOptions {
  /// The window's step; the kernel size when unset.
  std::optional<Pair2> stride;
  /// Implicit zero padding on each side.
  Pair2 padding = 0;
  /// @{
  /// ceil_mode: the output size rounds up rather than down; count_include_pad: padded zeros count in each
  /// window's divisor.
  bool ceil_mode = false, count_include_pad = true;
  /// @}
};

/// Average pooling as a module, as torch.nn.AvgPool2d.
class AvgPool2d : public Callable<AvgPool2d> {
 public:
  /// A pool with window `kernel_size` (one value or {h, w}).
  explicit AvgPool2d(Pair2 kernel_size, AvgPool2dOptions options = {}) : kernel_size(kernel_size), options(options) {}
  /// avg_pool2d(x, kernel_size, ...) with this module's options.
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    return avg_pool2d(x, kernel_size, options.stride, options.padding, options.ceil_mode, options.count_include_pad);
  }

  /// The window size.
  Pair2 kernel_size;
  /// The options it was made with.
  AvgPool2dOptions options;
};

/// Flattens dims start_dim..end_dim (by default all but the batch dim).
class Flatten : public Callable<Flatten> {
 public:
  /// Flattens dims start_dim to end_dim (negative dims count from the end).
  explicit Flatten(std::int64_t start_dim = 1, std::int64_t end_dim = -1) : start_dim(start_dim), end_dim(end_dim) {}
  /// flatten(x, start_dim, end_dim).
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    return flatten(x, start_dim, end_dim);
  }

  /// @{
  /// The first and last dims flattened.
  std::int64_t start_dim, end_dim;
  /// @}
};

}  // namespace lt::nn

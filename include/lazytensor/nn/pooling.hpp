#pragma once
// MaxPool2d and AvgPool2d over [N, C, H, W] or [C, H, W]; the stride defaults to the kernel.
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn {

struct MaxPool2dOptions {
  std::optional<Pair2> stride;
  Pair2 padding = 0, dilation = 1;
  bool ceil_mode = false;
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Pair2 kernel_size, MaxPool2dOptions options = {}) : kernel_size(kernel_size), options(options) {}
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    return max_pool2d(x, kernel_size, options.stride, options.padding, options.dilation, options.ceil_mode);
  }
  Tensor operator()(const Tensor& x, Site site = Site::current()) const { return forward(x, site); }

  Pair2 kernel_size;
  MaxPool2dOptions options;
};

struct AvgPool2dOptions {
  std::optional<Pair2> stride;
  Pair2 padding = 0;
  bool ceil_mode = false, count_include_pad = true;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Pair2 kernel_size, AvgPool2dOptions options = {}) : kernel_size(kernel_size), options(options) {}
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    return avg_pool2d(x, kernel_size, options.stride, options.padding, options.ceil_mode, options.count_include_pad);
  }
  Tensor operator()(const Tensor& x, Site site = Site::current()) const { return forward(x, site); }

  Pair2 kernel_size;
  AvgPool2dOptions options;
};

/// Flattens dims start_dim..end_dim (by default all but the batch dim).
class Flatten : public Module {
 public:
  explicit Flatten(std::int64_t start_dim = 1, std::int64_t end_dim = -1) : start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    return flatten(x, start_dim, end_dim);
  }
  Tensor operator()(const Tensor& x, Site site = Site::current()) const { return forward(x, site); }

  std::int64_t start_dim, end_dim;
};

}  // namespace lt::nn

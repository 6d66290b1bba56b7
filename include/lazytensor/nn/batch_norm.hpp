#pragma once
// BatchNorm1d ([N, C] or [N, C, L]) and BatchNorm2d ([N, C, H, W]): batch statistics while
// training, which also update the running statistics (buffers); those in eval mode.
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt::nn {

/// Options of BatchNorm1d and BatchNorm2d, as PyTorch's keyword arguments.
struct BatchNormOptions {
  /// Added to the variance before its square root.
  double eps = 1e-5;
  /// Weight of the new batch statistic in the running mean and variance.
  double momentum = 0.1;
  /// Whether the module has a learned scale (`weight`) and shift (`bias`).
  bool affine = true;
  /// Whether it keeps running statistics for eval mode (else it always uses the batch's).
  bool track_running_stats = true;
};

namespace detail {
class BatchNormBase : public Callable<BatchNormBase> {
 public:
  BatchNormBase(const char* name, std::int64_t num_features, BatchNormOptions options, int min_rank, int max_rank)
      : options(options), name_(name), num_features_(num_features), min_rank_(min_rank), max_rank_(max_rank) {
    LT_CHECK(num_features > 0, name, ": num_features must be positive, got ", num_features);
    if (options.affine) {
      weight = ones({num_features});
      bias = zeros({num_features});
    }
    if (options.track_running_stats) {
      running_mean = zeros({num_features});
      running_var = ones({num_features});
      num_batches_tracked = zeros({}, cpu, i64);
    }
    register_parameter("weight", weight);
    register_parameter("bias", bias);
    register_buffer("running_mean", running_mean);
    register_buffer("running_var", running_var);
    register_buffer("num_batches_tracked", num_batches_tracked);
  }

  Tensor forward(const Tensor& x, Site site = Site::current()) {
    RecordingSite at(site);
    if (!x.defined() || x.dim() < min_rank_ || x.dim() > max_rank_ || x.size(1) != num_features())
      fail(name_, ": expected input of rank ", min_rank_, min_rank_ == max_rank_ ? "" : " or " + std::to_string(max_rank_),
           " with ", num_features(), " channels in dim 1 (operands: ", describe(x), ")");
    // Without running statistics, eval mode normalises with the batch's, as PyTorch.
    bool use_batch = is_training() || !running_mean.defined();
    if (is_training() && num_batches_tracked.defined()) {
      no_grad guard;
      num_batches_tracked += 1;
    }
    std::optional<Tensor> w, b;
    if (weight.defined()) w = weight, b = bias;
    return batch_norm(x, running_mean, running_var, w, b, use_batch, options.momentum, options.eps);
  }

  std::int64_t num_features() const { return num_features_; }

  BatchNormOptions options;
  Tensor weight, bias;                                    // [C]: scale and shift (affine)
  Tensor running_mean, running_var, num_batches_tracked;  // buffers (track_running_stats)

 private:
  const char* name_;
  std::int64_t num_features_;
  int min_rank_, max_rank_;
};
}  // namespace detail

/// Batch normalisation over [N, C] or [N, C, L], per channel C, as torch.nn.BatchNorm1d.
class BatchNorm1d : public detail::BatchNormBase {
 public:
  /// A layer for `num_features` channels; weight 1, bias 0, running mean 0 and variance 1.
  explicit BatchNorm1d(std::int64_t num_features, BatchNormOptions options = {})
      : BatchNormBase("BatchNorm1d", num_features, options, 2, 3) {}
};

/// Batch normalisation over [N, C, H, W], per channel C, as torch.nn.BatchNorm2d.
class BatchNorm2d : public detail::BatchNormBase {
 public:
  /// A layer for `num_features` channels; weight 1, bias 0, running mean 0 and variance 1.
  explicit BatchNorm2d(std::int64_t num_features, BatchNormOptions options = {})
      : BatchNormBase("BatchNorm2d", num_features, options, 4, 4) {}
};

}  // namespace lt::nn

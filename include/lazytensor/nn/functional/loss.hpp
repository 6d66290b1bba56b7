#pragma once
// Losses, in lt::nn::functional. Each takes a `reduction`: mean (the default), sum or none.
#include <string_view>

#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/movement.hpp"
#include "lazytensor/trace/functions/nn.hpp"
#include "lazytensor/trace/functions/reduction.hpp"

namespace lt::nn::functional {

enum class Reduction { mean, sum, none };

namespace detail {
inline Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::mean: return loss.mean();
    case Reduction::sum: return loss.sum();
    case Reduction::none: return loss;
  }
  return loss;
}

inline void check_same_shape(std::string_view op, const Tensor& input, const Tensor& target) {
  const Tensor operands[] = {input, target};
  if (!input.defined() || !target.defined()) op_error(op, operands, "an operand is undefined");
  if (input.shape() != target.shape())
    op_error(op, operands, ::lt::detail::concat("input ", input.shape().str(), " and target ", target.shape().str(),
                                                " must have the same shape"));
  if (!is_floating(input.dtype()) || !is_floating(target.dtype()))
    op_error(op, operands, "input and target must be floating");
}

/// Checks input [N, C] or [N, C, d1, ...] against class indices [N] or [N, d1, ...]; on the
/// eager device also the index values (a lazy device finds them while running the gather).
inline void check_classes(std::string_view op, const Tensor& input, const Tensor& target, std::int64_t ignore_index) {
  const Tensor operands[] = {input, target};
  if (!input.defined() || !target.defined()) op_error(op, operands, "an operand is undefined");
  if (!is_floating(input.dtype())) op_error(op, operands, "input must be floating");
  if (target.dtype() != i64 && target.dtype() != i32) op_error(op, operands, "target must hold class indices (i64 or i32)");
  bool fits = input.dim() >= 1 && (input.dim() == 1 ? target.dim() == 0 : target.dim() == input.dim() - 1);
  for (int d = 0, t = 0; fits && d < input.dim(); ++d)
    if (d != (input.dim() == 1 ? 0 : 1)) fits = input.size(d) == target.size(t++);
  if (!fits)
    op_error(op, operands, ::lt::detail::concat("input ", input.shape().str(), " and target ", target.shape().str(),
                                                " do not match: expected input [N, C, *] and target [N, *]"));
  if (!target.device().is_lazy() && target.numel() > 0) {
    std::int64_t classes = input.size(input.dim() == 1 ? 0 : 1);
    for (std::int64_t c : target.to(i64).to_vector<std::int64_t>())
      if (c != ignore_index && (c < 0 || c >= classes))
        op_error(op, operands, ::lt::detail::concat("target class ", c, " is out of range for ", classes, " classes"));
  }
}

/// -log_probs at each target class: [N, *] from [N, C, *] (or [] from [C]).
inline Tensor picked(const Tensor& log_probs, const Tensor& target) {
  int class_dim = log_probs.dim() == 1 ? 0 : 1;
  return -squeeze(gather(log_probs, class_dim, unsqueeze(target, class_dim)), class_dim);
}

/// The targets that count: target != ignore_index.
inline Tensor counted(const Tensor& target, std::int64_t ignore_index) { return target != ignore_index; }

/// Reduces per-target losses over the counted targets: 0 where ignored (so is the gradient);
/// the mean divides by the count of counted targets (NaN when there is none, as PyTorch).
inline Tensor reduce_counted(const Tensor& loss, const Tensor& counted, Reduction r) {
  Tensor kept = where(counted, loss, 0.0);
  if (r != Reduction::mean) return reduce(kept, r);
  return kept.sum() / counted.to(loss.dtype()).sum();
}
}  // namespace detail

/// Negative log-likelihood of `target` classes under log-probabilities `input` [N, C, *].
/// Targets equal to `ignore_index` count for nothing, as PyTorch: their loss and gradient are
/// 0, and the mean is over the other targets (NaN when every target is ignored).
Tensor nll_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
                std::int64_t ignore_index = -100, Site site = Site::current());

/// Cross entropy of logits `input` [N, C, *] against class indices [N, *]. With label
/// smoothing ε the target is (1 - ε) on the class plus ε / C on every class. Targets equal to
/// `ignore_index` count for nothing, as in nll_loss (their smoothing term included).
Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
                     double label_smoothing = 0.0, std::int64_t ignore_index = -100, Site site = Site::current());

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
                Site site = Site::current());

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
                Site site = Site::current());

/// Binary cross entropy of logits against probabilities in [0, 1], in the stable form
/// max(x, 0) - x * t + log(1 + exp(-|x|)).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                               Reduction reduction = Reduction::mean,
                Site site = Site::current());

}  // namespace lt::nn::functional

#pragma once
// Gradient clipping, as torch.nn.utils: recorded into the step's graph like the optimizer's
// update, so clipping reads nothing back and the step stays one graph and one plan.
#include <vector>

#include "lazytensor/trace/tensor.hpp"

namespace lt::nn::utils {

/// Scales the gradients of `parameters` in place so that their total norm is at most
/// `max_norm`: the norm of order `norm_type` (positive, or infinity) over every gradient as
/// one vector, and each gradient times min(1, max_norm / (total + 1e-6)), as PyTorch. Returns
/// the total norm before clipping, a zero-dim tensor still to be computed on a lazy device.
/// Parameters without a gradient are skipped; with none, the norm is 0. The gradients must be
/// floating and on one device. With `error_if_nonfinite`, a NaN or infinite total norm is a
/// fault of the step: lt::Error naming clip_grad_norm_ and the norm, raised at the next
/// barrier or read on a lazy device (at once on the eager one), and the gradients are left
/// pending in that failed graph. lt::Error at once for a negative or NaN `max_norm` or an
/// unsupported `norm_type`.
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false, Site site = Site::current());

/// Clamps every gradient of `parameters` into [-clip_value, clip_value] in place, as PyTorch's
/// clip_grad_value_ (NaN stays NaN). Parameters without a gradient are skipped; lt::Error for
/// a negative or NaN `clip_value`.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value, Site site = Site::current());

}  // namespace lt::nn::utils

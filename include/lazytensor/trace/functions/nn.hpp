#pragma once
// Neural-network functions: linear, conv2d, pooling, softmax, log_softmax, layer_norm and
// batch_norm. Only conv2d and the pools have kernels; the rest compose primitives.
#include <array>
#include <optional>

#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/trace/autocast.hpp"
#include "lazytensor/trace/functions/contraction.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"
#include "lazytensor/trace/functions/movement.hpp"
#include "lazytensor/trace/functions/reduction.hpp"

namespace lt {

/// An (h, w) pair that a single number also gives, as PyTorch's int-or-tuple arguments.
struct Pair2 {
  /// @{
  /// The height and the width.
  std::int64_t h, w;
  /// @}
  /// Both the same: 3 means {3, 3} (implicit, as PyTorch's int-or-tuple arguments).
  Pair2(std::int64_t v) : h(v), w(v) {}  // NOLINT: implicit on purpose
  /// Height `h_` and width `w_`.
  Pair2(std::int64_t h_, std::int64_t w_) : h(h_), w(w_) {}
};

/// x @ weight^T + bias over the last dim of x (any leading dims).
inline Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                     Site site = Site::current()) {
  RecordingSite at(site);
  if (weight.defined() && weight.dim() != 2) op_error("linear", {&weight, 1}, "weight must be [out, in]");
  // Under autocast, all of linear in bf16; the weight cast before its transpose, so that the
  // cast streams through it.
  Tensor y = matmul(x, detail::autocast_lower(weight).t());
  return bias ? y + detail::autocast_lower(*bias) : y;
}

namespace detail {
/// Runs a [N, C, H, W] op on an unbatched [C, H, W] input too.
template <class F>
Tensor batched4(const Tensor& x, F&& f) {
  if (x.defined() && x.dim() == 3) return squeeze(f(unsqueeze(x, 0)), 0);
  return f(x);
}
}  // namespace detail

inline Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                     Pair2 stride = 1, Pair2 padding = 0, Pair2 dilation = 1, std::int64_t groups = 1,
 Site site = Site::current()) {
  RecordingSite at(site);
  Attrs a = encode(Conv2dAttrs{stride.h, stride.w, padding.h, padding.w, dilation.h, dilation.w, groups});
  Tensor y = detail::batched4(x, [&](const Tensor& x4) { return record(contraction::conv2d, {x4, weight}, a); });
  if (!bias) return y;
  if (bias->dim() != 1 || bias->size(0) != weight.size(0)) op_error("conv2d", {&*bias, 1}, "bias must be [out_channels]");
  return y + detail::autocast_lower(bias->reshape({-1, 1, 1}));  // broadcasts over [N, C, H, W] and [C, H, W]
}

/// conv2d's gradient with respect to its input [N, C, H, W] (input_size), given the gradient
/// of its output, as one op (torch.nn.grad.conv2d_input).
inline Tensor conv2d_input_grad(const Tensor& grad_output, const Tensor& weight, const Shape& input_size, Pair2 stride = 1,
                                Pair2 padding = 0, Pair2 dilation = 1, std::int64_t groups = 1,
 Site site = Site::current()) {
  RecordingSite at(site);
  if (input_size.rank() != 4 || (grad_output.defined() && grad_output.dim() == 4 && input_size[0] != grad_output.size(0)) ||
      (weight.defined() && weight.dim() == 4 && input_size[1] != weight.size(1) * groups))
    op_error("conv2d_input_grad", {&grad_output, 1}, "input_size must be [N, C, H, W] with the gradient's N and the weight's C");
  Attrs a = encode(Conv2dGradAttrs{Conv2dAttrs{stride.h, stride.w, padding.h, padding.w, dilation.h, dilation.w, groups}, input_size[2], input_size[3]});
  return record(contraction::conv2d_input_grad, {grad_output, weight}, a);
}

/// conv2d's gradient with respect to its weight [O, C/groups, kH, kW] (weight_size), given
/// the input and the gradient of the output, as one op (torch.nn.grad.conv2d_weight).
inline Tensor conv2d_weight_grad(const Tensor& x, const Shape& weight_size, const Tensor& grad_output, Pair2 stride = 1,
                                 Pair2 padding = 0, Pair2 dilation = 1, std::int64_t groups = 1,
 Site site = Site::current()) {
  RecordingSite at(site);
  if (weight_size.rank() != 4 || (grad_output.defined() && grad_output.dim() == 4 && weight_size[0] != grad_output.size(1)) ||
      (x.defined() && x.dim() == 4 && groups > 0 && weight_size[1] * groups != x.size(1)))
    op_error("conv2d_weight_grad", {&x, 1}, "weight_size must be [O, C/groups, kH, kW] with the gradient's O and the input's C");
  Attrs a = encode(Conv2dGradAttrs{Conv2dAttrs{stride.h, stride.w, padding.h, padding.w, dilation.h, dilation.w, groups}, weight_size[2], weight_size[3]});
  return record(contraction::conv2d_weight_grad, {x, grad_output}, a);
}

namespace detail {
inline Tensor pool(const OpDesc& op, const Tensor& x, Pair2 kernel, std::optional<Pair2> stride, Pair2 padding,
                   Pair2 dilation, bool ceil_mode, bool count_include_pad) {
  Pair2 s = stride.value_or(kernel);
  Attrs a = encode(
      Pool2dAttrs{kernel.h, kernel.w, s.h, s.w, padding.h, padding.w, dilation.h, dilation.w, ceil_mode, count_include_pad});
  return batched4(x, [&](const Tensor& x4) { return record(op, {x4}, a); });
}
}  // namespace detail

/// stride defaults to the kernel size, as in PyTorch.
inline Tensor max_pool2d(const Tensor& x, Pair2 kernel, std::optional<Pair2> stride = std::nullopt, Pair2 padding = 0,
                         Pair2 dilation = 1, bool ceil_mode = false, Site site = Site::current()) {
  RecordingSite at(site);
  return detail::pool(pool::max_pool2d, x, kernel, stride, padding, dilation, ceil_mode, true);
}

/// The gradient of max_pool2d(x, kernel, ...) given the gradient of its output, as one op:
/// each output's gradient added at the element its window chose. x is [N, C, H, W].
inline Tensor max_pool2d_backward(const Tensor& grad_output, const Tensor& x, Pair2 kernel,
                                  std::optional<Pair2> stride = std::nullopt, Pair2 padding = 0, Pair2 dilation = 1,
                                  bool ceil_mode = false, Site site = Site::current()) {
  RecordingSite at(site);
  Pair2 s = stride.value_or(kernel);
  Attrs a = encode(Pool2dAttrs{kernel.h, kernel.w, s.h, s.w, padding.h, padding.w, dilation.h, dilation.w, ceil_mode, true});
  return record(pool::max_pool2d_backward, {grad_output, x}, a);
}

inline Tensor avg_pool2d(const Tensor& x, Pair2 kernel, std::optional<Pair2> stride = std::nullopt, Pair2 padding = 0,
                         bool ceil_mode = false, bool count_include_pad = true, Site site = Site::current()) {
  RecordingSite at(site);
  return detail::pool(pool::avg_pool2d, x, kernel, stride, padding, 1, ceil_mode, count_include_pad);
}

inline Tensor adaptive_avg_pool2d(const Tensor& x, Pair2 output_size, Site site = Site::current()) {
  RecordingSite at(site);
  Attrs a = encode(AdaptivePool2dAttrs{output_size.h, output_size.w});
  return detail::batched4(x, [&](const Tensor& x4) { return record(pool::adaptive_avg_pool2d, {x4}, a); });
}

// Composite ops: built from the ops above, defined once per program (trace/functions/definitions.hpp).
/// exp(x - max) / sum: the max shift keeps exp finite.
Tensor softmax(const Tensor& x, std::int64_t dim, Site site = Site::current());
Tensor log_softmax(const Tensor& x, std::int64_t dim, Site site = Site::current());
/// Normalises over the trailing dims `normalized_shape` (biased variance), then scales and shifts.
Tensor layer_norm(const Tensor& x, Shape normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5, Site site = Site::current());
/// Input [N, C] or [N, C, *]. Training normalises with the batch statistics (biased variance)
/// and updates the running statistics in place with the unbiased variance, as PyTorch; eval
/// normalises with the running statistics.
Tensor batch_norm(const Tensor& x, Tensor running_mean, Tensor running_var,
                  const std::optional<Tensor>& weight = std::nullopt, const std::optional<Tensor>& bias = std::nullopt,
                  bool training = false, double momentum = 0.1, double eps = 1e-5, Site site = Site::current());

}  // namespace lt

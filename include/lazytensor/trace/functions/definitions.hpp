#pragma once
// The composite ops of trace/functions/ (softmax, norms, dropout), defined: built from primitives, so they need no
// kernel of their own, and compiled once per program, by the implementation
// (lazytensor/implementation.hpp), never by a file of its own.
#include <algorithm>

#include "lazytensor/trace/functions/contraction.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/nn.hpp"

namespace lt {

Tensor softmax(const Tensor& input, std::int64_t dim, Site site) {
  RecordingSite at(site);
  const Tensor x = detail::autocast_wide(input);  // in f32 under autocast, as torch.autocast's fp32 list
  Tensor e = exp(x - amax(x, dim, true));
  return e / sum(e, dim, true);
}

Tensor log_softmax(const Tensor& input, std::int64_t dim, Site site) {
  RecordingSite at(site);
  const Tensor x = detail::autocast_wide(input);
  Tensor shifted = x - amax(x, dim, true);
  return shifted - log(sum(exp(shifted), dim, true));
}

Tensor layer_norm(const Tensor& input, Shape normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, Site site) {
  RecordingSite at(site);
  const Tensor x = detail::autocast_wide(input);
  int k = normalized_shape.rank();
  bool fits = x.defined() && k >= 1 && k <= x.dim();
  for (int i = 0; fits && i < k; ++i) fits = x.shape()[x.dim() - k + i] == normalized_shape[i];
  if (!fits) op_error("layer_norm", {&x, 1}, "normalized_shape " + normalized_shape.str() + " is not the input's trailing shape");
  // As PyTorch: a weight or bias of another shape would broadcast the result past x's shape.
  auto check_affine = [&](const std::optional<Tensor>& t, const char* what) {
    if (t && t->defined() && t->shape() != normalized_shape)
      op_error("layer_norm", {&*t, 1}, std::string(what) + " must have normalized_shape " + normalized_shape.str());
  };
  check_affine(weight, "weight");
  check_affine(bias, "bias");
  Dims dims;
  for (int i = x.dim() - k; i < x.dim(); ++i) dims.push_back(i);
  Tensor mu = mean(x, dims, true);
  // A Tensor of its own, not part of the expression below: computed once per row, not per element.
  Tensor inv_std = rsqrt(var(x, dims, 0, true) + eps);
  Tensor y = (x - mu) * inv_std;
  if (weight) y = y * *weight;
  return bias ? y + *bias : y;
}

Tensor batch_norm(const Tensor& input, Tensor running_mean, Tensor running_var, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, bool training, double momentum, double eps, Site site) {
  RecordingSite at(site);
  const Tensor x = detail::autocast_wide(input);
  if (!x.defined() || x.dim() < 2) op_error("batch_norm", {&x, 1}, "expects input [N, C] or [N, C, *]");
  std::int64_t c = x.size(1);
  Shape stat_shape = Dims::filled(x.dim(), 1);
  stat_shape[1] = c;
  Dims dims;
  for (int i = 0; i < x.dim(); ++i)
    if (i != 1) dims.push_back(i);
  Tensor mu, v;
  if (training) {
    std::int64_t count = x.numel() / std::max<std::int64_t>(c, 1);
    if (count <= 1) op_error("batch_norm", {&x, 1}, "training needs more than one value per channel");
    mu = mean(x, dims);
    v = var(x, dims, 0);
    // The running statistics take the batch's values, not its autograd history.
    if (running_mean.defined()) running_mean.assign(running_mean * (1 - momentum) + mu.detach() * momentum);
    if (running_var.defined())
      running_var.assign(running_var * (1 - momentum) +
                         v.detach() * (momentum * static_cast<double>(count) / static_cast<double>(count - 1)));
  } else {
    if (!running_mean.defined() || !running_var.defined())
      op_error("batch_norm", {&x, 1}, "eval mode needs running_mean and running_var");
    mu = running_mean, v = running_var;
  }
  // As PyTorch's CPU kernel: a scale and a shift per channel, so that the pass over x (and
  // its gradient's) is one multiply-add per element, and the gradients of the statistics and
  // of the affine parameters are sums of [C] values, not passes over x of their own.
  Tensor inv_std = rsqrt(v.reshape(stat_shape) + eps);
  Tensor scale = weight ? Tensor(inv_std * weight->reshape(stat_shape)) : inv_std;
  Tensor shift = bias ? Tensor(bias->reshape(stat_shape) - mu.reshape(stat_shape) * scale)
                      : Tensor(-(mu.reshape(stat_shape) * scale));
  return x * scale + shift;
}

Tensor dropout(const Tensor& x, double p, bool training, Site site) {
  RecordingSite at(site);
  if (!(p >= 0 && p <= 1)) op_error("dropout", {&x, 1}, detail::concat("p must be in [0, 1], got ", p));
  if (!is_floating(x.dtype())) op_error("dropout", {&x, 1}, "expected a floating tensor");
  if (!training || p == 0) return x;
  if (p == 1) return zeros_like(x);
  // One expression over the draw: the comparison and the scaling fuse with x's consumers
  // (a cast of a bool mask would be an op of its own, and the mask a full-size value). Both
  // branches are of x's dtype, and a dropped value is x * 0, as PyTorch's (NaN stays NaN).
  return where(rand(x.shape(), x.device()) >= p, x * (1 / (1 - p)), x * 0.0);
}

namespace detail {
Tensor tree_matmul(const Tensor& a, const Tensor& b) {
  const std::int64_t k_extent = a.shape()[a.dim() - 1];
  // A product whose operands do not fit raises the product's own error.
  if (k_extent != b.shape()[b.dim() - 2] || k_extent == 0) return record(contraction::matmul, {a, b});
  Shape as = a.shape(), bs = b.shape();
  as.push_back(1);              // [..., M, K, 1]
  bs.insert(bs.rank() - 2, 1);  // [..., 1, K, N]
  Tensor terms(reshape(a, as) * reshape(b, bs));
  const int k = terms.dim() - 2;
  // Adjacent pairs first, level by level; at a level of odd extent the last term waits.
  std::vector<Tensor> waiting;
  while (terms.shape()[k] > 1) {
    std::int64_t n = terms.shape()[k];
    if (n % 2 == 1) {
      waiting.push_back(narrow(terms, k, n - 1, 1));
      terms = narrow(terms, k, 0, --n);
    }
    Shape pairs = terms.shape();
    pairs[k] = n / 2;
    pairs.insert(k + 1, 2);
    terms = sum(reshape(terms, pairs), k + 1, false);
  }
  for (const Tensor& w : waiting) terms = Tensor(terms + w);
  Shape out = terms.shape();
  out.erase(k);
  return reshape(terms, out);
}
}  // namespace detail

}  // namespace lt

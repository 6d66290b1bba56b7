#pragma once
// The vocabulary of gradient rules. Each differentiable op's rule sits beside its descriptor
// and reads its recorded node through a GradContext; it writes each input's gradient as ops on
// GradValues, handles to values of the backward graph. The autograd layer supplies the
// GradBuilder that records those ops (lazily on a lazy device, at once on the eager one), so a
// rule is written once for both. Rules name ops by stable id: no op header needs another's
// descriptor, and the backward graph is made of the same table's ops as the forward one.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include "lazytensor/core/replica.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/op_attrs.hpp"

namespace lt {

struct GradValue;

/// Records the ops of a backward graph on one device.
class GradBuilder {
 public:
  /// The result of op `id` on `inputs` with `attrs`; ops without inputs are made on the
  /// builder's device.
  virtual GradValue apply(OpId id, std::span<const GradValue> inputs, Attrs attrs) = 0;
  /// A constant computed on the host from shapes and attributes alone (window weights, index
  /// tables): its values never depend on data, so it does not change the graph's key.
  virtual GradValue constant(std::span<const double> values, const Shape& shape, DType dtype) = 0;
  virtual const Meta& meta(int id) const = 0;

 protected:
  ~GradBuilder() = default;
};

/// A value of the backward graph; undefined (id -1) stands for "no gradient", a zero.
struct GradValue {
  GradBuilder* builder = nullptr;
  int id = -1;

  bool defined() const { return id >= 0; }
  const Meta& meta() const { return builder->meta(id); }
  const Shape& shape() const { return meta().shape; }
  DType dtype() const { return meta().dtype; }
  int dim() const { return shape().rank(); }
};

/// One recorded op as its rule sees it: the op, its attributes, its input and output values,
/// the gradient of its output, and which inputs want a gradient.
struct GradContext {
  GradBuilder& builder;
  const OpDesc& op;
  const Attrs& attrs;
  std::span<const GradValue> inputs;
  GradValue output;
  GradValue grad;
  std::span<const bool> needs;
  std::span<GradValue> grads;  // written by the rule; an undefined one means no gradient

  const GradValue& input(std::size_t k) const { return inputs[k]; }
  bool needs_grad(std::size_t k) const { return needs[k]; }
  /// Adds `g` to input k's gradient; `g` must have the input's shape.
  void set(std::size_t k, GradValue g);
};

namespace grad {

inline GradValue apply(OpId id, std::initializer_list<GradValue> in, Attrs a = {}) {
  return in.begin()->builder->apply(id, std::span<const GradValue>(in.begin(), in.size()), std::move(a));
}

/// A C++ number as an operand: weakest in type promotion, so results keep the tensor's dtype.
inline GradValue scalar(GradBuilder& b, double v) {
  return b.apply(OpId::scalar, {}, encode(ScalarAttrs{DType::f64, {static_cast<std::int64_t>(v)}, v}));
}

inline GradValue full(GradBuilder& b, const Shape& shape, double value, DType dtype) {
  return b.apply(OpId::full, {}, encode(FullAttrs{dtype, shape.span(), {static_cast<std::int64_t>(value)}, value}));
}
inline GradValue zeros(GradBuilder& b, const Shape& shape, DType dtype) { return full(b, shape, 0, dtype); }
inline GradValue zeros_like(const GradValue& x) { return zeros(*x.builder, x.shape(), x.dtype()); }

inline GradValue unary(OpId id, const GradValue& x, Attrs a = {}) { return apply(id, {x}, std::move(a)); }
inline GradValue binary(OpId id, const GradValue& a, const GradValue& b) { return apply(id, {a, b}); }
inline GradValue binary(OpId id, const GradValue& a, double b) { return apply(id, {a, scalar(*a.builder, b)}); }
inline GradValue binary(OpId id, double a, const GradValue& b) { return apply(id, {scalar(*b.builder, a), b}); }

// The table's plain unary ops and its binary ops, on gradient values: grad::exp(x), grad::pow(a, 2).
#define LT_GRAD_UNARY_plain(op) \
  inline GradValue op(const GradValue& x) { return unary(OpId::op, x); }
#define LT_GRAD_UNARY_custom(op)
#define LT_GRAD_UNARY(op, number, Fn, Rule, face, ...) LT_GRAD_UNARY_##face(op)
LT_UNARY_TABLE(LT_GRAD_UNARY)
#undef LT_GRAD_UNARY
#undef LT_GRAD_UNARY_plain
#undef LT_GRAD_UNARY_custom

#define LT_GRAD_BINARY(op, ...)                                                                        \
  inline GradValue op(const GradValue& a, const GradValue& b) { return binary(OpId::op, a, b); }       \
  inline GradValue op(const GradValue& a, double b) { return binary(OpId::op, a, b); }                 \
  inline GradValue op(double a, const GradValue& b) { return binary(OpId::op, a, b); }
LT_BINARY_TABLE(LT_GRAD_BINARY)
#undef LT_GRAD_BINARY

inline GradValue where(const GradValue& c, const GradValue& a, const GradValue& b) { return apply(OpId::where, {c, a, b}); }
inline GradValue where(const GradValue& c, const GradValue& a, double b) {
  return apply(OpId::where, {c, a, scalar(*a.builder, b)});
}
inline GradValue where(const GradValue& c, double a, const GradValue& b) {
  return apply(OpId::where, {c, scalar(*b.builder, a), b});
}

inline GradValue cast(const GradValue& x, DType t) {
  if (x.dtype() == t) return x;
  return unary(OpId::cast, x, encode(CastAttrs{t}));
}

inline GradValue reshape(const GradValue& x, const Shape& s) {
  if (x.shape() == s) return x;
  return unary(OpId::reshape, x, encode(DimsAttrs{s.span()}));
}
inline GradValue expand(const GradValue& x, const Shape& s) {
  if (x.shape() == s) return x;
  return unary(OpId::expand, x, encode(DimsAttrs{s.span()}));
}
inline GradValue permute(const GradValue& x, const std::vector<std::int64_t>& perm) {
  return unary(OpId::permute, x, encode(DimsAttrs{perm}));
}
/// Swaps the last two dims.
inline GradValue transpose_last(const GradValue& x) {
  std::vector<std::int64_t> perm;
  for (int d = 0; d < x.dim(); ++d) perm.push_back(d);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return permute(x, perm);
}
inline GradValue flip(const GradValue& x, const std::vector<std::int64_t>& dims) {
  return unary(OpId::flip, x, encode(DimsAttrs{dims}));
}
inline GradValue slice(const GradValue& x, int dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) {
  return unary(OpId::slice, x, encode(SliceAttrs{dim, start, end, step}));
}
/// Constant padding in torch.nn.functional.pad's order: (before, after) from the last dim back;
/// negative amounts crop.
inline GradValue pad(const GradValue& x, const std::vector<std::int64_t>& pads, double value = 0) {
  return unary(OpId::pad, x, encode(PadAttrs{pads, value}));
}
/// Pads (or, negative, crops) one dim.
inline GradValue pad_dim(const GradValue& x, int dim, std::int64_t before, std::int64_t after) {
  if (before == 0 && after == 0) return x;
  std::vector<std::int64_t> pads(2 * static_cast<std::size_t>(x.dim() - dim), 0);
  pads[pads.size() - 2] = before;
  pads[pads.size() - 1] = after;
  return pad(x, pads);
}

/// A reduction over `dims` (sorted; none: every dim), as the reduction ops take them.
inline GradValue reduce(OpId id, const GradValue& x, std::span<const std::int64_t> dims, bool keepdim) {
  return unary(id, x, encode(ReductionAttrs{keepdim, dims}));
}
/// The sum over dim `d` (kept with extent 1) as a fixed tree: adjacent pairs first, level by
/// level; at a level of odd extent the last value waits and is added after the tree.
inline GradValue tree_sum_dim(GradValue x, int d) {
  std::vector<GradValue> waiting;
  while (x.shape()[d] > 1) {
    std::int64_t n = x.shape()[d];
    if (n % 2 == 1) {
      waiting.push_back(slice(x, d, n - 1, n));
      x = slice(x, d, 0, --n);
    }
    Shape pairs = x.shape();
    pairs[d] = n / 2;
    pairs.insert(d + 1, 2);
    const std::int64_t inner[] = {d + 1};
    x = reduce(OpId::sum, reshape(x, pairs), inner, false);
  }
  for (const GradValue& w : waiting) x = binary(OpId::add, x, w);
  return x;
}

/// A sum over `dims` (none: every dim). On a reproducible replica (core/replica.hpp) a tree of
/// pairs, which adds a batch split over replicas in the same order as a whole batch.
inline GradValue sum(const GradValue& x, std::span<const std::int64_t> dims, bool keepdim) {
  if (!lt::detail::reproducible_sums || x.dim() == 0) return reduce(OpId::sum, x, dims, keepdim);
  std::vector<std::int64_t> all(dims.begin(), dims.end());
  if (all.empty())
    for (int d = 0; d < x.dim(); ++d) all.push_back(d);
  GradValue out = x;
  for (std::int64_t d : all) out = tree_sum_dim(out, static_cast<int>(d));
  if (keepdim) return out;
  Shape kept;
  for (int d = 0; d < x.dim(); ++d)
    if (std::find(all.begin(), all.end(), d) == all.end()) kept.push_back(x.shape()[d]);
  return reshape(out, kept);
}

/// Sums a broadcast gradient back to the shape of the operand that was broadcast.
inline GradValue sum_to(const GradValue& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  int lead = g.dim() - shape.rank();
  std::vector<std::int64_t> dims;
  for (int d = 0; d < g.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && g.shape()[d] != 1)) dims.push_back(d);
  if (dims.empty()) return reshape(g, shape);
  return reshape(sum(g, dims, true), shape);
}

/// The gradient of a reduction's result, broadcast back over the input: its reduced dims
/// reinstated as extent 1 (when the result dropped them) and expanded.
inline GradValue unreduce(const GradValue& g, const Shape& in, std::span<const std::int64_t> dims) {
  return expand(reshape(g, [&] {
                  Shape kept = in;
                  for (int d = 0; d < in.rank(); ++d)
                    if (dims.empty() || std::find(dims.begin(), dims.end(), d) != dims.end()) kept[d] = 1;
                  return kept;
                }()),
                in);
}

/// a [..., M, K] times b [..., K, N]. On a reproducible replica, products of matrices are
/// traced as per-term products summed by a tree over K: no kernel's choice of order depends on
/// the batch's size then.
inline GradValue matmul(const GradValue& a, const GradValue& b) {
  if (!lt::detail::reproducible_sums || a.dim() < 2 || b.dim() < 2) return binary(OpId::matmul, a, b);
  Shape as = a.shape(), bs = b.shape();
  as.push_back(1);               // [..., M, K, 1]
  bs.insert(bs.rank() - 2, 1);   // [..., 1, K, N]
  GradValue terms = binary(OpId::mul, reshape(a, as), reshape(b, bs));
  const int k = terms.dim() - 2;
  GradValue summed = tree_sum_dim(terms, k);
  Shape out = summed.shape();
  out.erase(k);
  return reshape(summed, out);
}
inline GradValue gather(const GradValue& x, std::int64_t dim, const GradValue& index) {
  return apply(OpId::gather, {x, index}, encode(DimAttrs{dim}));
}
inline GradValue scatter_add(const GradValue& self, std::int64_t dim, const GradValue& index, const GradValue& src) {
  return apply(OpId::scatter_add, {self, index, src}, encode(DimAttrs{dim}));
}

}  // namespace grad

// Arithmetic on gradient values, so that rules read like their formulas.
inline GradValue operator+(const GradValue& a, const GradValue& b) { return grad::binary(OpId::add, a, b); }
inline GradValue operator-(const GradValue& a, const GradValue& b) { return grad::binary(OpId::sub, a, b); }
inline GradValue operator*(const GradValue& a, const GradValue& b) { return grad::binary(OpId::mul, a, b); }
inline GradValue operator/(const GradValue& a, const GradValue& b) { return grad::binary(OpId::div, a, b); }
inline GradValue operator+(const GradValue& a, double b) { return grad::binary(OpId::add, a, b); }
inline GradValue operator-(const GradValue& a, double b) { return grad::binary(OpId::sub, a, b); }
inline GradValue operator*(const GradValue& a, double b) { return grad::binary(OpId::mul, a, b); }
inline GradValue operator/(const GradValue& a, double b) { return grad::binary(OpId::div, a, b); }
inline GradValue operator+(double a, const GradValue& b) { return grad::binary(OpId::add, a, b); }
inline GradValue operator-(double a, const GradValue& b) { return grad::binary(OpId::sub, a, b); }
inline GradValue operator*(double a, const GradValue& b) { return grad::binary(OpId::mul, a, b); }
inline GradValue operator/(double a, const GradValue& b) { return grad::binary(OpId::div, a, b); }
inline GradValue operator-(const GradValue& a) { return grad::neg(a); }

inline void GradContext::set(std::size_t k, GradValue g) {
  GradValue& slot = grads[k];
  slot = slot.defined() ? slot + g : g;
}

}  // namespace lt

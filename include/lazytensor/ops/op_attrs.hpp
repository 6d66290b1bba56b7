#pragma once
// The typed attributes of every op that takes attributes: the tracer encodes them, the op's
// rules and kernels decode them (ops/attr_fields.hpp). An op without an entry here takes none.
#include <cstdint>

#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/replica.hpp"
#include "lazytensor/core/scalar.hpp"
#include "lazytensor/ops/attr_fields.hpp"

namespace lt {

// ---- leaf ---------------------------------------------------------------------------------

/// leaf::scalar: a C++ number. Integer dtypes take `integer`, so large i64 values stay exact.
struct ScalarAttrs {
  DType dtype = DType::f64;
  AttrData<std::int64_t> integer{};
  double real = 0;
  LT_ATTR_FIELDS(dtype, integer, real)

  static ScalarAttrs of(const Scalar& s) { return {s.dtype, {s.i}, s.f}; }
  template <class T> T as() const { return dtype == DType::f64 ? static_cast<T>(real) : static_cast<T>(integer.value); }
};

struct CastAttrs {
  DType to = DType::f32;
  LT_ATTR_FIELDS(to)
};

// ---- creation -----------------------------------------------------------------------------
// Every creation op's attributes begin with the dtype it makes (creation_dtype).

struct FullAttrs {
  DType dtype = DType::f32;
  AttrWords shape{};
  AttrData<std::int64_t> integer{};  // the value, for integer dtypes
  double real = 0;                 // the value, for floating and bool dtypes
  LT_ATTR_FIELDS(dtype, shape, integer, real)
};

/// Integer ranges keep their bounds exact in `start` .. `step`; floating ones take the reals.
struct ArangeAttrs {
  DType dtype = DType::f32;
  bool integral = false;
  std::int64_t start = 0, end = 0, step = 1;
  double real_start = 0, real_end = 0, real_step = 1;
  LT_ATTR_FIELDS(dtype, integral, start, end, step, real_start, real_end, real_step)
};

struct LinspaceAttrs {
  DType dtype = DType::f32;
  std::int64_t steps = 0;
  double start = 0, end = 0;
  LT_ATTR_FIELDS(dtype, steps, start, end)
};

struct EyeAttrs {
  DType dtype = DType::f32;
  std::int64_t n = 0, m = 0;
  LT_ATTR_FIELDS(dtype, n, m)
};

/// rand and randn: Philox blocks offset, offset + 1, ... of the stream `seed`. The seed and the
/// offset are data: each call draws anew without a new plan.
struct RandomAttrs {
  DType dtype = DType::f32;
  AttrWords shape{};
  AttrData<std::uint64_t> seed{}, offset{};
  LT_ATTR_FIELDS(dtype, shape, seed, offset)
};

/// randint: integers in [low, high), bounds that are data as well.
struct RandintAttrs {
  RandomAttrs draw{};
  AttrData<std::int64_t> low{}, high{};
  LT_ATTR_FIELDS(draw, low, high)
};

// ---- movement and indexing ----------------------------------------------------------------

/// reshape and expand: the target shape; permute: the permutation; flip: the dims flipped.
struct DimsAttrs {
  AttrWords dims{};
  LT_ATTR_FIELDS(dims)
};

/// cat, index_select, gather, scatter_add: the dim they work along.
struct DimAttrs {
  std::int64_t dim = 0;
  LT_ATTR_FIELDS(dim)
};

/// Already wrapped and clamped: 0 <= start <= end.
struct SliceAttrs {
  std::int64_t dim = 0, start = 0, end = 0, step = 1;
  LT_ATTR_FIELDS(dim, start, end, step)
};

/// {before, after} pairs from the last dim backwards, as torch.nn.functional.pad; negative
/// amounts crop.
struct PadAttrs {
  AttrWords pads{};
  double value = 0;
  LT_ATTR_FIELDS(pads, value)
};

/// tril and triu.
struct TriangleAttrs {
  std::int64_t diagonal = 0;
  LT_ATTR_FIELDS(diagonal)
};

// ---- reduction ----------------------------------------------------------------------------

/// The reduced dims non-negative, sorted and unique; none reduces every dim. var and std take
/// Bessel's correction as well, the others none.
struct ReductionAttrs {
  bool keepdim = false;
  AttrWords dims{};
  std::optional<double> correction{};
  LT_ATTR_FIELDS(keepdim, dims, correction)
};

// ---- contraction and windows --------------------------------------------------------------

struct Conv2dAttrs {
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1, groups = 1;
  LT_ATTR_FIELDS(stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups)
};

/// conv2d_input_grad: the input's spatial size; conv2d_weight_grad: the kernel's.
struct Conv2dGradAttrs {
  Conv2dAttrs conv{};
  std::int64_t h = 0, w = 0;
  LT_ATTR_FIELDS(conv, h, w)
};

/// max_pool2d, avg_pool2d and max_pool2d_backward.
struct Pool2dAttrs {
  std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1,
               dilation_w = 1;
  bool ceil_mode = false, count_include_pad = true;
  LT_ATTR_FIELDS(kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, ceil_mode,
                 count_include_pad)

  // Along axis k: 0 for H, 1 for W.
  std::int64_t kernel(int k) const { return k == 0 ? kernel_h : kernel_w; }
  std::int64_t stride(int k) const { return k == 0 ? stride_h : stride_w; }
  std::int64_t pad(int k) const { return k == 0 ? pad_h : pad_w; }
  std::int64_t dilation(int k) const { return k == 0 ? dilation_h : dilation_w; }
};

struct AdaptivePool2dAttrs {
  std::int64_t h = 0, w = 0;
  LT_ATTR_FIELDS(h, w)
};

struct AttentionAttrs {
  double scale = 1;
  LT_ATTR_FIELDS(scale)
};

// ---- elementwise --------------------------------------------------------------------------

struct GeluAttrs {
  bool tanh_form = false;  // false: the exact (erf) form
  LT_ATTR_FIELDS(tanh_form)
};

/// Above the threshold softplus is linear, as in PyTorch.
struct SoftplusAttrs {
  double beta = 1, threshold = 20;
  LT_ATTR_FIELDS(beta, threshold)
};

/// `floating`: whether the bounds are floating numbers (they take part in type promotion).
struct ClampAttrs {
  bool has_min = false, has_max = false, floating = false;
  double min = 0, max = 0;
  LT_ATTR_FIELDS(has_min, has_max, floating, min, max)
};

/// What a check_finite node guards, named in its fault.
enum class FiniteGuard : std::int64_t {
  value = 0,      ///< a value of the user's
  grad_norm = 1,  ///< clip_grad_norm_'s total norm of the gradients, of order `order`
};

struct CheckFiniteAttrs {
  FiniteGuard guard = FiniteGuard::value;
  double order = 0;
  LT_ATTR_FIELDS(guard, order)
};

// ---- collectives --------------------------------------------------------------------------

/// all_reduce. `op` is sum, max or min: a mean is traced as a sum and a scale.
struct AllReduceAttrs {
  ReduceOp op = ReduceOp::sum;
  LT_ATTR_FIELDS(op)
};

/// all_gather: the dim the shards are joined along.
using AllGatherAttrs = DimAttrs;

struct ReduceScatterAttrs {
  ReduceOp op = ReduceOp::sum;
  std::int64_t dim = 0;
  LT_ATTR_FIELDS(op, dim)
};

struct BroadcastAttrs {
  std::int64_t root = 0;
  LT_ATTR_FIELDS(root)
};

// ---- what holds across ops ----------------------------------------------------------------

/// The dtype a creation op's attributes say it makes.
inline DType creation_dtype(const Attrs& a) {
  LT_CHECK(!a.ints.empty(), "a creation op's attributes name its dtype first");
  return static_cast<DType>(*a.ints.begin());
}
/// Makes a creation op's attributes name `t` instead.
inline void set_creation_dtype(Attrs& a, DType t) {
  LT_CHECK(!a.ints.empty(), "a creation op's attributes name its dtype first");
  *a.ints.begin() = static_cast<std::int64_t>(t);
}

}  // namespace lt

#pragma once
// Creation: tensors from C++ data, constants, ranges, identity matrices and random values.
// Every function takes the device to create on (the eager cpu by default) and a dtype.
#include <algorithm>
#include <bit>
#include <optional>
#include <vector>

#include "lazytensor/core/random.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/ops/random_attrs.hpp"
#include "lazytensor/trace/dispatch.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"

namespace lt {

/// A tensor of `shape` holding a copy of `values` (row-major).
template <class T>
Tensor from_vector(const std::vector<T>& values, Shape shape, Device device = cpu) {
  LT_CHECK(static_cast<std::int64_t>(values.size()) == shape.numel(), "from_vector: ", values.size(),
           " values do not fill shape ", shape);
  Array a = Array::empty(dtype_v<T>, shape);
  std::copy(values.begin(), values.end(), a.view.ptr<T>());
  if (device.is_lazy()) metrics::counter_handle("TransferToDevice").add();
  return tensor_from_array(a, device);
}

template <class T>
Tensor from_vector(const std::vector<T>& values, Device device = cpu) {
  return from_vector(values, Shape{static_cast<std::int64_t>(values.size())}, device);
}

namespace detail {
/// Records a random op, first claiming its Philox blocks from the default generator. The
/// attrs are checked before the claim, so a failed call leaves the generator untouched.
template <class A>
Tensor record_random(const OpDesc& op, A& attrs, RandomAttrs& draw, Device device) {  // draw: attrs or a part of it
  Meta out;
  try {
    out = op.infer({}, encode(attrs));
  } catch (const Error& e) {
    op_error(op.name, {}, e.what());
  }
  RandomState s = default_generator().reserve(static_cast<std::uint64_t>(creation::blocks_drawn(op, out)));
  draw.seed.value = s.seed;
  draw.offset.value = s.offset;
  return record(op, {}, encode(attrs), device);
}
}  // namespace detail

/// A tensor of `shape` filled with `value`. Without a dtype it follows the value, as
/// torch.full: a floating value gives f32, an integer i64, a bool bool.
inline Tensor full(Shape shape, Scalar value, Device device = cpu, std::optional<DType> dtype = std::nullopt,
                   Site site = Site::current()) {
  RecordingSite at(site);
  DType t = dtype ? *dtype : value.dtype == DType::f64 ? default_float : value.dtype;
  return record(creation::full, {}, encode(FullAttrs{t, shape.span(), {value.i}, value.f}), device);
}
inline Tensor zeros(Shape shape, Device device = cpu, DType dtype = f32, Site site = Site::current()) {
  return full(shape, 0, device, dtype, site);
}
inline Tensor ones(Shape shape, Device device = cpu, DType dtype = f32, Site site = Site::current()) {
  return full(shape, 1, device, dtype, site);
}

/// Same shape, dtype and device as `x`.
inline Tensor full_like(const Tensor& x, Scalar value, Site site = Site::current()) {
  return full(x.shape(), value, x.device(), x.dtype(), site);
}
inline Tensor zeros_like(const Tensor& x, Site site = Site::current()) {
  return full_like(x, 0, site);
}
inline Tensor ones_like(const Tensor& x, Site site = Site::current()) {
  return full_like(x, 1, site);
}

/// Values start, start + step, ... below `end` (above it for a negative step). Without a
/// dtype: i64 when every argument is an integer, else f32.
inline Tensor arange(Scalar start, Scalar end, Scalar step = 1, Device device = cpu,
                     std::optional<DType> dtype = std::nullopt, Site site = Site::current()) {
  RecordingSite at(site);
  bool integral = start.dtype != DType::f64 && end.dtype != DType::f64 && step.dtype != DType::f64;
  DType t = dtype ? *dtype : integral ? DType::i64 : default_float;
  return record(creation::arange, {},
                encode(ArangeAttrs{t, integral, start.i, end.i, step.i, start.f, end.f, step.f}), device);
}
inline Tensor arange(Scalar end, Device device = cpu, std::optional<DType> dtype = std::nullopt,
                     Site site = Site::current()) {
  return arange(0, end, 1, device, dtype, site);
}

/// `steps` values evenly spaced from start to end, both included.
inline Tensor linspace(Scalar start, Scalar end, std::int64_t steps, Device device = cpu, DType dtype = f32,
                       Site site = Site::current()) {
  RecordingSite at(site);
  return record(creation::linspace, {}, encode(LinspaceAttrs{dtype, steps, start.f, end.f}), device);
}

/// The n x m matrix with ones on the diagonal; m = -1 makes it square.
inline Tensor eye(std::int64_t n, std::int64_t m, Device device = cpu, DType dtype = f32, Site site = Site::current()) {
  RecordingSite at(site);
  return record(creation::eye, {}, encode(EyeAttrs{dtype, n, m == -1 ? n : m}), device);
}
inline Tensor eye(std::int64_t n, Device device = cpu, DType dtype = f32, Site site = Site::current()) {
  return eye(n, n, device, dtype, site);
}

/// Uniform values in [0, 1) from the default generator (see manual_seed).
inline Tensor rand(Shape shape, Device device = cpu, DType dtype = f32, Site site = Site::current()) {
  RecordingSite at(site);
  RandomAttrs a{dtype, shape.span(), {}, {}};
  return detail::record_random(creation::rand, a, a, device);
}

/// Standard normal values from the default generator.
inline Tensor randn(Shape shape, Device device = cpu, DType dtype = f32, Site site = Site::current()) {
  RecordingSite at(site);
  RandomAttrs a{dtype, shape.span(), {}, {}};
  return detail::record_random(creation::randn, a, a, device);
}

/// Integers uniform in [low, high) from the default generator.
inline Tensor randint(std::int64_t low, std::int64_t high, Shape shape, Device device = cpu, DType dtype = i64,
                      Site site = Site::current()) {
  RecordingSite at(site);
  RandintAttrs a{{dtype, shape.span(), {}, {}}, {low}, {high}};
  return detail::record_random(creation::randint, a, a.draw, device);
}
inline Tensor randint(std::int64_t high, Shape shape, Device device = cpu, DType dtype = i64,
                      Site site = Site::current()) {
  return randint(0, high, shape, device, dtype, site);
}

/// Zeroes each element with probability p and scales the rest by 1 / (1 - p), so the
/// expectation is unchanged. The identity when not training or when p is 0. A composite op
/// (trace/functions/definitions.hpp).
Tensor dropout(const Tensor& x, double p, bool training = true, Site site = Site::current());

}  // namespace lt

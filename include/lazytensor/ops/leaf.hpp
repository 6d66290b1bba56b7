#pragma once
// Leaves of a step graph: device data, C++ scalars, and the dtype cast.
#include <array>
#include <cstdint>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/grad.hpp"
#include "lazytensor/ops/kernels/convert.hpp"
#include "lazytensor/ops/kernels/strided.hpp"

namespace lt::leaf {

/// Data already on the device. It has no kernel: executors read the node's Array.
inline Meta no_infer(std::span<const Meta>, const Attrs&) { fail("device data is made by the tracer, not inferred"); }

/// A C++ scalar operand. attrs: ints {dtype, integer value}, floats {floating value}.
inline Meta scalar_infer(std::span<const Meta>, const Attrs& a) {
  return {Shape{}, static_cast<DType>(a.ints[0]), true};
}
inline void scalar_kernel(std::span<const View>, const View& out, const Attrs& a) {
  visit_storage(out.dtype, [&]<class T>(Tag<T>) {
    constexpr bool floating = std::is_floating_point_v<T> || std::is_same_v<T, bfloat16>;
    *out.ptr<T>() = floating ? static_cast<T>(a.floats[0]) : static_cast<T>(a.ints[1]);
  });
}

/// attrs: ints {target dtype}.
inline Meta cast_infer(std::span<const Meta> in, const Attrs& a) {
  auto t = static_cast<DType>(a.ints[0]);
  LT_CHECK(t <= DType::bf16, "dtype ", static_cast<int>(t), " is out of range");
  return {in[0].shape, t};
}
inline void cast_kernel(std::span<const View> in, const View& out, const Attrs&) { kernels::copy_into(in[0], out); }
/// A cast to the same dtype is the input itself.
inline bool cast_view(std::span<const View> in, const Attrs& a, View& out) {
  if (in[0].dtype != static_cast<DType>(a.ints[0])) return false;
  out = in[0];
  out.wrapped_number = false;
  return true;
}

LT_DEFINE_OP(device_data, OpDesc{OpId::device_data, "device_data", OpKind::leaf, 0, &no_infer, nullptr});
// Its value is data: a graph that differs only in it reuses its plan (but 0 and 1 fold).
LT_DEFINE_OP(scalar, OpDesc{OpId::scalar, "scalar", OpKind::creation, 0, &scalar_infer, &scalar_kernel,
                               nullptr, nullptr, {}, /*value_ints=*/0b10, /*folds_special_values=*/true, nullptr, nullptr,
                               Bf16Operands::storage});
/// A cast's gradient is the output's, cast back (by the autograd layer) to the input's dtype.
inline void cast_grad(GradContext& c) { c.set(0, c.grad); }
// Bound (kernels::convert_bind): a fused group that converts, bf16 work above all, runs in
// the row loop.
LT_DEFINE_OP(cast, OpDesc{OpId::cast, "cast", OpKind::elementwise, 1, &cast_infer, &cast_kernel, &cast_view, &cast_grad, {},
                          /*value_ints=*/0, /*folds_special_values=*/false, nullptr, &kernels::convert_bind,
                          Bf16Operands::storage});

}  // namespace lt::leaf

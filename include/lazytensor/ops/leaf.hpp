#pragma once
// Leaves of a step graph: device data, C++ scalars, and the dtype cast.
#include <array>
#include <cstdint>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/grad.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/ops/kernels/convert.hpp"
#include "lazytensor/ops/kernels/strided.hpp"

namespace lt::leaf {

/// Data already on the device. It has no kernel: executors read the node's Array.
inline Meta no_infer(std::span<const Meta>, const Attrs&) { fail("device data is made by the tracer, not inferred"); }

/// A C++ scalar operand (ScalarAttrs).
inline Meta scalar_infer(std::span<const Meta>, const Attrs& a) {
  auto s = decode<ScalarAttrs>(a);
  LT_CHECK(is_dtype(s.dtype), "dtype ", static_cast<int>(s.dtype), " is out of range");
  return {Shape{}, s.dtype, true};
}
inline void scalar_kernel(std::span<const View>, const View& out, const Attrs& a) {
  auto s = decode<ScalarAttrs>(a);
  visit_storage(out.dtype, [&]<class T>(Tag<T>) {
    constexpr bool floating = std::is_floating_point_v<T> || std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>;
    *out.ptr<T>() = floating ? static_cast<T>(s.real) : static_cast<T>(s.integer.value);
  });
}

/// CastAttrs: the target dtype.
inline Meta cast_infer(std::span<const Meta> in, const Attrs& a) {
  DType t = decode<CastAttrs>(a).to;
  LT_CHECK(is_dtype(t), "dtype ", static_cast<int>(t), " is out of range");
  return {in[0].shape, t};
}
inline void cast_kernel(std::span<const View> in, const View& out, const Attrs&) { kernels::copy_into(in[0], out); }
/// A cast to the same dtype is the input itself.
inline bool cast_view(std::span<const View> in, const Attrs& a, View& out) {
  if (in[0].dtype != decode<CastAttrs>(a).to) return false;
  out = in[0];
  out.wrapped_number = false;
  return true;
}

LT_DEFINE_OP(device_data, OpDesc{.kind = OpKind::leaf, .arity = 0, .infer = &no_infer});
// Its value is data: a graph that differs only in it reuses its plan (but 0 and 1 fold).
LT_DEFINE_OP(scalar, OpDesc{.kind = OpKind::creation,
                            .arity = 0,
                            .infer = &scalar_infer,
                            .kernel = &scalar_kernel,
                            .folds_special_values = true,
                            .bf16 = Bf16Operands::storage});
/// A cast's gradient is the output's, cast back (by the autograd layer) to the input's dtype.
inline void cast_grad(GradContext& c) { c.set(0, c.grad); }
// Bound (kernels::convert_bind): a fused group that converts, bf16 work above all, runs in
// the row loop.
LT_DEFINE_OP(cast, OpDesc{.kind = OpKind::elementwise,
                          .arity = 1,
                          .infer = &cast_infer,
                          .kernel = &cast_kernel,
                          .view = &cast_view,
                          .grad = &cast_grad,
                          .bind = &kernels::convert_bind,
                          .bf16 = Bf16Operands::storage});

}  // namespace lt::leaf

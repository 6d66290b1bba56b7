#pragma once
// bf16 storage (LT_USE_BF16=1, PyTorch/XLA's XLA_USE_BF16): f32 values on lazy devices are
// stored as bf16 while the program keeps seeing f32. Such a tensor's Meta says f32; its node,
// and after a barrier its device data, hold bf16. An op on stored values computes in f32 on
// them widened (exactly) and its f32 result is stored rounded to bf16 once, as a bf16 op's
// result is; ops that only move or convert values take the stored values as they are. Eager
// tensors are unaffected. Values enter through tensor_from_array (rounded), and leave widened
// (read_contiguous, save). Recording meets it in emit_untracked alone; fragments record op by
// op, so that each op's result is rounded.
#include <atomic>
#include <span>

#include "lazytensor/core/array.hpp"
#include "lazytensor/core/env.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/trace/tensor_impl.hpp"

namespace lt {

class Tensor;

namespace detail {
/// The setting: 1 on, 0 off, -1 until LT_USE_BF16 is first read. A plain constant-initialised
/// word, not a function-local static: tracing reads it on every op, and a static's guard and
/// call cost more than the read.
inline constinit std::atomic<int> bf16_storage_state{-1};
[[gnu::noinline]] inline bool read_bf16_storage_setting() {
  int expected = -1;
  bf16_storage_state.compare_exchange_strong(expected, env_flag("LT_USE_BF16", false) ? 1 : 0,
                                             std::memory_order_relaxed);
  return bf16_storage_state.load(std::memory_order_relaxed) == 1;
}
}  // namespace detail

/// Whether f32 tensors on lazy devices are stored as bf16 (LT_USE_BF16=1, or set_bf16_storage).
inline bool bf16_storage() {
  const int state = detail::bf16_storage_state.load(std::memory_order_relaxed);
  return state < 0 ? detail::read_bf16_storage_setting() : state == 1;
}

/// Turns bf16 storage on or off for what is recorded from now on, whatever LT_USE_BF16 says.
/// Switch it only where no lazy f32 tensor made under the other setting is used again (at the
/// start of a program or a test): a stored tensor keeps its storage, but ops recorded with
/// storage off take operands as their Metas say.
inline void set_bf16_storage(bool on) { detail::bf16_storage_state.store(on ? 1 : 0, std::memory_order_relaxed); }

namespace detail {

/// Whether `t` is an f32 tensor whose value is stored as bf16.
inline bool stored_as_bf16(const TensorImpl& t) {
  return t.meta.dtype == DType::f32 && t.node != nullptr && t.node->meta.dtype == DType::bf16;
}

/// Whether a lazy value of Meta `m` is stored as bf16 (storage on): f32, not a C++ scalar.
inline bool stores_as_bf16(const Meta& m) { return m.dtype == DType::f32 && !m.wrapped_number; }

/// emit_untracked's lazy branch under bf16 storage: `op` on `inputs` with checked result `out`.
Tensor record_stored_bf16(const OpDesc& op, std::span<const Tensor> inputs, Attrs&& attrs, const Meta& out, Device device);

/// `data` as a lazy device stores it: f32 rounded to bf16 under bf16 storage, else itself.
Array stored_data(Array data);

}  // namespace detail
}  // namespace lt

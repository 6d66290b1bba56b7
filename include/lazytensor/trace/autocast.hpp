#pragma once
// Autocast: a per-thread recording policy, torch.autocast's on the CPU. Under it, products
// (matmul and the convolutions) cast their f32 operands to the autocast dtype (bf16 or f16)
// and multiply with f32 accumulation; the ops that lose most in low precision (sums, means,
// variances, exp, log, pow and the composites built on them: softmax, norms, losses) cast
// such operands to f32. Other ops
// run in their operands' dtype, mixed operands promoting to the widest. The casts are ops of
// the graph, so a step traced under autocast has a graph, hence a plan, of its own; their
// gradients are casts back, so the gradients of f32 leaves stay f32. A cast of device data
// that no gradient flows through is made once and kept with the data (trace/autocast_cache.hpp).
#include <optional>
#include <span>
#include <vector>

#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/error.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/op_id.hpp"
#include "lazytensor/trace/autocast_cache.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

namespace detail {
/// The calling thread's autocast dtype, f32 when autocast is off. Constant-initialised, so
/// reading it is one load (every recorded op reads it).
constinit inline thread_local DType autocast_state = DType::f32;
}  // namespace detail

/// Whether ops the calling thread records now are autocast.
inline bool autocast_enabled() noexcept { return detail::autocast_state != DType::f32; }

/// The dtype products run in under the calling thread's autocast: bf16 or f16, or f32 when it is off.
inline DType autocast_dtype() noexcept { return detail::autocast_state; }

/// Turns autocast on (`lt::autocast guard(lt::bf16);`) or off (`lt::autocast guard(lt::f32);`,
/// or `enabled = false`, as torch.autocast(enabled=False)) for the ops the calling thread
/// records until the guard goes out of scope, when the previous state returns. Guards nest;
/// other threads are unaffected. Backward passes run with autocast off: their ops take the
/// dtypes the forward ops chose.
class autocast {
 public:
  /// Autocast to `dtype` (bf16 or f16; f32 turns it off) while this guard lives; `enabled = false`
  /// turns it off whatever `dtype` is. Any other dtype is an lt::Error. With `cache_enabled`
  /// (torch.autocast's), a cast of device data that no gradient flows through is made once and
  /// kept with that data, for every later step that reads the same value; false casts it afresh
  /// each time. Either way the values are the same.
  explicit autocast(DType dtype = DType::bf16, bool enabled = true, bool cache_enabled = true)
      : previous_(detail::autocast_state), previous_cache_(detail::autocast_cache_state) {
    if (!is_low_precision(dtype) && dtype != DType::f32)
      fail("autocast: expected dtype bf16 or f16 (or f32 to turn autocast off), got ", name(dtype));
    detail::autocast_state = enabled ? dtype : DType::f32;
    detail::autocast_cache_state = cache_enabled;
  }
  /// Restores the state that held when this guard was made.
  ~autocast() {
    detail::autocast_state = previous_;
    detail::autocast_cache_state = previous_cache_;
  }
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  DType previous_;
  bool previous_cache_;
};

namespace detail {

/// What autocast does to an op's floating operands (PyTorch's CPU lists, with the
/// precision-sensitive elementwise ops of its CUDA fp32 list).
enum class AutocastRule : std::uint8_t {
  keep,   ///< operands as they are; mixed bf16/f32 promote to f32
  lower,  ///< f32 operands cast to the autocast dtype
  wide,   ///< bf16 operands cast to f32
};

constexpr AutocastRule autocast_rule(OpId id) {
  switch (id) {
    // The fused attention op takes f32 or f64 only: under autocast, attention runs as its
    // composite, whose products are matmuls.
    case OpId::matmul:
    case OpId::conv2d:
    case OpId::conv2d_input_grad:
    case OpId::conv2d_weight_grad: return AutocastRule::lower;
    case OpId::sum:
    case OpId::mean:
    case OpId::prod:
    case OpId::var:
    case OpId::std:
    case OpId::logsumexp:
    case OpId::exp:
    case OpId::expm1:
    case OpId::log:
    case OpId::log1p:
    case OpId::log2:
    case OpId::rsqrt:
    case OpId::reciprocal:
    case OpId::pow:
    case OpId::softplus: return AutocastRule::wide;
    default: return AutocastRule::keep;
  }
}

/// `t` cast to `to` where it is a tensor of dtype `from` (not a C++ scalar operand); a cast of
/// device data is kept and reused where autocast_cacheable says so.
inline Tensor autocast_operand(const Tensor& t, DType from, DType to) {
  if (!t.defined() || t.dtype() != from || t.meta().wrapped_number) return t;
  auto cast = [&] { return record_cast(t, to); };
  return autocast_cacheable(t) ? autocast_cached(t, to, cast) : cast();
}

/// `t` as a product's operand under the calling thread's autocast (a bias, cast as the
/// product's operands are), else `t`.
inline Tensor autocast_lower(const Tensor& t) {
  return autocast_enabled() ? autocast_operand(t, DType::f32, autocast_state) : t;
}

/// `t` in f32 where autocast is on and `t` is of its dtype, else `t`: the input of a composite
/// of the wide list (softmax, norms, losses).
inline Tensor autocast_wide(const Tensor& t) {
  return autocast_enabled() ? autocast_operand(t, autocast_state, DType::f32) : t;
}

/// `op` on `inputs` recorded with its operands cast as autocast's rule for it says, or
/// nothing where no operand needs a cast (the caller records it as it is). lt::record calls
/// it for every op while autocast is on.
inline std::optional<Tensor> autocast_record(const OpDesc& op, std::span<const Tensor> inputs, const Attrs& attrs,
                                             Device device) {
  const AutocastRule rule = autocast_rule(op.id);
  if (rule == AutocastRule::keep) return std::nullopt;
  const DType from = rule == AutocastRule::lower ? DType::f32 : autocast_state;
  const DType to = rule == AutocastRule::lower ? autocast_state : DType::f32;
  bool any = false;
  for (const Tensor& t : inputs) any = any || (t.dtype() == from && !t.meta().wrapped_number);
  if (!any) return std::nullopt;
  std::vector<Tensor> cast;
  cast.reserve(inputs.size());
  for (const Tensor& t : inputs) cast.push_back(autocast_operand(t, from, to));
  return record(op, cast, attrs, device);
}

}  // namespace detail
}  // namespace lt

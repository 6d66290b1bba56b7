#pragma once
// Where tracing meets reverse mode. The tracer knows nothing of autograd; it calls these hooks
// when an operand requires grad, and the autograd layer installs them when the first tensor
// is marked to require it. Tensors that do not require grad cost one null check per op.
#include <atomic>
#include <span>

#include "lazytensor/ops/descriptor.hpp"

namespace lt {

class Tensor;
struct TensorImpl;

struct GradHooks {
  /// `op` just made `out` from `inputs`, one of which at least requires grad.
  void (*record)(const OpDesc& op, std::span<const Tensor> inputs, const Attrs& attrs, const Tensor& out);
  /// `dst` is about to take `src`'s value, and one of them requires grad; may refuse by throwing.
  void (*assign)(TensorImpl& dst, const TensorImpl& src);
};

namespace detail {
inline std::atomic<const GradHooks*> grad_hooks{nullptr};
/// The calling thread's open lt::no_grad scopes (autograd/grad_mode.hpp). Here so that the
/// tracer can tell whether an op it records now can take part in a gradient.
inline thread_local int no_grad_depth = 0;
}  // namespace detail

}  // namespace lt

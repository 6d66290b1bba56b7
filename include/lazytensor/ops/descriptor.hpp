#pragma once
// The op descriptor: everything the tracer, the executors and (later) autograd need to know
// about one op. Passes dispatch on `kind` and traits, never on a particular op.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "lazytensor/core/array.hpp"
#include "lazytensor/core/hash.hpp"
#include "lazytensor/ops/op_id.hpp"

namespace lt {

enum class OpKind : std::uint8_t {
  leaf,         // data already on the device
  creation,     // makes values from attributes alone (full, arange, rand, ...)
  elementwise,  // out[i] depends on in[i] of each (broadcast) input: fusible
  reduction,    // reduces a set of dims
  movement,     // rearranges or selects elements (views, cat, gather, ...)
  contraction,  // matmul, conv2d
  window,       // pooling
};

/// Shape, dtype and standing of a value, known at trace time.
struct Meta {
  Shape shape;
  DType dtype = DType::f32;
  bool wrapped_number = false;  // a C++ scalar operand: weakest in type promotion
};

/// Op attributes: integers (dims, sizes, flags, dtypes) and reals (scalars, eps, p).
/// Their meaning is fixed per op by its descriptor.
struct Attrs {
  std::vector<std::int64_t> ints;
  std::vector<double> floats;

  std::int64_t i(std::size_t k) const { return ints[k]; }
  double f(std::size_t k) const { return floats[k]; }
  friend bool operator==(const Attrs&, const Attrs&) = default;
};

/// Shape and dtype rule: validates the operands and returns the result's Meta. Throws
/// lt::Error with the reason only; the tracer adds the op name and the operands.
using InferFn = Meta (*)(std::span<const Meta> in, const Attrs& attrs);
/// Computes the op into `out`, a fresh contiguous View of the inferred Meta.
using KernelFn = void (*)(std::span<const View> in, const View& out, const Attrs& attrs);
/// For ops that can alias their input: sets `out` to a View of in[0]'s memory and returns
/// true, or returns false when this input needs a copy (then `kernel` runs).
using ViewFn = bool (*)(std::span<const View> in, const Attrs& attrs, View& out);

/// Reverse-mode rule: writes the gradients of an op's inputs from its output's (ops/grad.hpp).
/// Each rule sits beside its op's descriptor; the autograd layer runs them.
struct GradContext;
using GradFn = void (*)(GradContext&);
/// The rule of ops whose results carry no gradient (comparisons, argmax, bool results):
/// reverse mode passes nothing through them, as PyTorch does.
inline void not_differentiable(GradContext&) {}

struct OpDesc;
/// The dtype an elementwise op computes in, given its operands and result dtype.
using ComputeFn = DType (*)(std::span<const Meta> in, DType out);

/// One step of a fragment's body (an elementwise expression run as one node), in evaluation
/// order: a tensor operand, or an op applied to the values of the steps before it. An op
/// that `reads_attrs` takes its attributes, in step order, from the fragment node's attributes.
struct FragmentStep {
  const OpDesc* op;           // nullptr: tensor operand `slot`
  ComputeFn compute;          // ops only
  std::int16_t slot;          // tensor operands only
  bool reads_attrs;
};

struct OpDesc {
  OpId id;
  std::string_view name;
  OpKind kind;
  int arity;  // number of tensor inputs; -1: any number (cat)
  InferFn infer;
  KernelFn kernel;
  ViewFn view = nullptr;
  GradFn grad = nullptr;
  std::span<const FragmentStep> body{};  // fragments only
  /// Attribute words that are data, not structure: bit k marks ints[k] (a seed, a fill value).
  /// Every float is data too. A plan reads them from the live graph at each run, so they never
  /// enter a graph's key and changing them compiles nothing.
  std::uint8_t value_ints = 0;
  /// A C++ scalar operand: whether its value is 0, 1 or another number enters the key, as XLA
  /// folds 0 and 1 into the graph (LT_NO_SPECIAL_SCALARS=1 turns that off).
  bool folds_special_values = false;
};

/// `d` with its gradient rule: `inline constexpr auto exp = with_grad(elementwise_op<...>(...), &rule);`
template <class Desc>
constexpr Desc with_grad(Desc d, GradFn rule) {
  d.grad = rule;
  return d;
}

}  // namespace lt

#pragma once
// The op descriptor: everything the tracer, the executors and (later) autograd need to know
// about one op. Passes dispatch on `kind` and traits, never on a particular op.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "lazytensor/core/array.hpp"
#include "lazytensor/core/hash.hpp"
#include "lazytensor/core/small_vector.hpp"
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
  collective,   // exchanges values with the other replicas (ops/collective.hpp): a step of its own
};

/// Shape, dtype and standing of a value, known at trace time.
struct Meta {
  Shape shape;
  DType dtype = DType::f32;
  bool wrapped_number = false;  // a C++ scalar operand: weakest in type promotion
};

/// Op attributes as flat words: structural integers (dims, sizes, flags, dtypes), which enter
/// a graph's key, and data (integer values such as a seed, and reals such as a scalar or eps),
/// which a plan reads from the live graph each run. Ops read and build them through their typed
/// attributes (ops/attr_fields.hpp). Each list keeps a few words in place: nearly every op's
/// attributes fit, and tracing then allocates nothing for them.
struct Attrs {
  SmallVector<std::int64_t, 8> ints;
  SmallVector<std::int64_t, 2> values;
  SmallVector<double, 2> floats;

  bool empty() const { return ints.empty() && values.empty() && floats.empty(); }
  /// The three counts first: attributes that differ mostly differ in one, and then no list
  /// is walked. Floats compare by their bits: a kernel bound to 0 must not serve -0, and a NaN
  /// is the same attribute as itself. Always inline: a plan compares every node's attributes on
  /// each run, and GCC keeps a comparison of three lists out of line.
  [[gnu::always_inline]] friend bool operator==(const Attrs& a, const Attrs& b) {
    if (a.ints.size() != b.ints.size() || a.values.size() != b.values.size() || a.floats.size() != b.floats.size() ||
        !(a.ints == b.ints) || !(a.values == b.values))
      return false;
    for (std::size_t k = 0; k < a.floats.size(); ++k)
      if (std::bit_cast<std::uint64_t>(a.floats[k]) != std::bit_cast<std::uint64_t>(b.floats[k])) return false;
    return true;
  }
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
struct TiledProduct;

/// How an op meets bf16 operands. Arithmetic never runs on bf16: the tracer records an op that
/// computes as casts of its bf16 operands to f32, the op in f32, and a cast of the result back
/// (lt::record), so that its kernels exist for f32 alone; ops that only move or convert
/// values take bf16 storage as it is.
enum class Bf16Operands : std::uint8_t {
  by_kind,  ///< storage for movement ops, leaves and collectives; f32 for the others
  storage,  ///< the kernel copies or converts bf16 values as stored
  as_f32,   ///< the op computes: recorded in f32 between casts
};

/// A kernel bound once to its operands' dtypes and attributes, then called on contiguous runs
/// of values with no set-up per call: how a fused row loop runs its members (runtime/row_loop.hpp).
/// It computes exactly what the op's kernel computes on the same values.
struct BoundKernel {
  static constexpr std::size_t state_bytes = 192;
  BoundKernel() {}  // NOLINT: leaves `state` uninitialised, which binding fills
  /// Elementwise: dst[i] = op(src[0][i], src[1][i], ...) for i < n; `stream`: dst is a result
  /// far larger than the caches, its packets stored past them (call stream_fence() after).
  using Map = void (*)(const void* state, const void* const* src, void* dst, std::int64_t n, bool stream);
  Map map = nullptr;
  /// map where the last operand is one value for all n (src's last entry points at it); for
  /// ops with a faster form then, else nullptr.
  Map map_uniform_last = nullptr;
  /// Reduction: *dst = the op's result for one row of n >= 1 contiguous values, reduced in the
  /// same chunks as the op's kernel reduces a row.
  void (*reduce)(const void* row, std::int64_t n, const Attrs& attrs, void* dst) = nullptr;
  DType input = DType::f32;   // the dtype every tensor operand must be read as
  bool converts = false;      // only converts its operand from `input` to the result's dtype (a cast)
  DType result = DType::f32;  // the dtype `reduce` writes (the result's dtype converts from it)
  /// An f32 elementwise op's forms on bf16 values (kernels/bf16_map.hpp): the map for operands
  /// each a run of bf16 values, or one f32 value where bit k of `uniform` is set, that rounds
  /// its results to bf16; nullptr where it has none. nullptr for other ops.
  Map (*bf16_form)(unsigned uniform) = nullptr;
  alignas(64) std::byte state[state_bytes];
};
/// Binds an op for operands `in` and result `out`, or returns false where it has no bound form
/// for them (the plan then runs the op's kernel).
using BindFn = bool (*)(std::span<const Meta> in, const Meta& out, const Attrs& attrs, BoundKernel& into);  // ops/tiled_product.hpp
/// The dtype an elementwise op computes in, given its operands and result dtype.
using ComputeFn = DType (*)(std::span<const Meta> in, DType out);

/// One step of a fragment's body (an elementwise expression run as one node), in evaluation
/// order: a tensor operand, or an op applied to the values of the steps before it. An op
/// that `reads_attrs` takes its attributes, in step order, from the fragment node's attributes.
struct FragmentStep {
  const OpDesc* op;           // nullptr: tensor operand `slot`
  OpId id;                    // op's id, known where op's value is not (its definition is elsewhere)
  ComputeFn compute;          // ops only
  std::int16_t slot;          // tensor operands only
  bool reads_attrs;
};

struct OpDesc {
  OpId id{};                // with name, from the op's table line (LT_DEFINE_OP)
  std::string_view name{};
  OpKind kind{};
  int arity = 0;  // number of tensor inputs; -1: any number (cat)
  InferFn infer = nullptr;
  KernelFn kernel = nullptr;
  ViewFn view = nullptr;
  GradFn grad = nullptr;
  std::span<const FragmentStep> body{};  // fragments only
  /// A C++ scalar operand: whether its value is 0, 1 or another number enters the key, as XLA
  /// folds 0 and 1 into the graph (LT_NO_SPECIAL_SCALARS=1 turns that off).
  bool folds_special_values = false;
  /// A contraction that can hand its output over tile by tile (ops/tiled_product.hpp): plans
  /// run its elementwise consumers on each tile while it is in cache.
  const TiledProduct* tiled = nullptr;
  /// Elementwise ops, fragments and reductions: the bound form of `kernel`.
  BindFn bind = nullptr;
  /// How bf16 operands reach the op (see Bf16Operands).
  Bf16Operands bf16 = Bf16Operands::by_kind;
};

/// Whether `op` takes bf16 operands as stored, rather than in f32 between casts.
constexpr bool takes_bf16_storage(const OpDesc& op) {
  if (op.bf16 != Bf16Operands::by_kind) return op.bf16 == Bf16Operands::storage;
  return op.kind == OpKind::movement || op.kind == OpKind::leaf || op.kind == OpKind::collective;
}

/// Whether a node of `op` whose result has dtype `out`, reading a first input of dtype `in`,
/// may be a view of that input rather than a value of its own: an op with a view, unless it is
/// elementwise and changes the dtype (a view shares its input's bytes, so it keeps their dtype;
/// a cast to another dtype computes, and fuses). Planner and plan loader decide by this alone.
constexpr bool may_alias(const OpDesc& op, DType out, DType in) {
  return op.view != nullptr && (op.kind != OpKind::elementwise || out == in);
}

/// An op's line of the op table: its stable id and its name.
struct OpRow {
  OpId id;
  std::string_view name;
};

/// `d` as the descriptor of the op of table line `row` (LT_DEFINE_OP).
constexpr OpDesc described(OpRow row, OpDesc d) {
  d.id = row.id;
  d.name = row.name;
  return d;
}

}  // namespace lt

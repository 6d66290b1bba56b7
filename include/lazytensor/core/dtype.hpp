#pragma once
// Element types: their properties in one table, and PyTorch's type promotion from it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ostream>
#include <string_view>
#include <type_traits>
#include <utility>

#include "lazytensor/core/bfloat16.hpp"
#include "lazytensor/core/float16.hpp"
#include "lazytensor/core/error.hpp"

namespace lt {

/// Element type of a tensor. The numbering is stable: it enters hashes and files.
enum class DType : std::uint8_t { boolean = 0, i32 = 1, i64 = 2, f32 = 3, f64 = 4, bf16 = 5, f16 = 6 };

inline constexpr DType boolean = DType::boolean;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType f16 = DType::f16;  ///< IEEE half precision (torch.half)

/// What kind of number a dtype holds; promotion never goes to a lower category.
enum class DTypeCategory : std::uint8_t { boolean, integral, floating };

/// A dtype's properties. Everything that differs between dtypes, other than the C++ type that
/// stores it (dtype_of, visit), is read from here.
struct DTypeInfo {
  DType dtype;                   ///< the dtype described
  std::string_view name;         ///< as printed: "f32"
  std::size_t size;              ///< bytes per element
  DTypeCategory category;        ///< boolean, integral or floating
  int rank;                      ///< width within its category: the wider of two promotes
  DType compute;                 ///< the dtype its arithmetic runs in: f32 for low-precision floats
  std::string_view safetensors;  ///< the safetensors dtype name
  int reference_writer_rank;     ///< the reference safetensors writer's data order (largest first)
};

/// One entry per dtype, in the order of their stable numbers.
inline constexpr DTypeInfo dtype_table[] = {
    {DType::boolean, "bool", 1, DTypeCategory::boolean, 0, DType::boolean, "BOOL", 0},
    {DType::i32, "i32", 4, DTypeCategory::integral, 1, DType::i32, "I32", 9},
    {DType::i64, "i64", 8, DTypeCategory::integral, 2, DType::i64, "I64", 13},
    {DType::f32, "f32", 4, DTypeCategory::floating, 2, DType::f32, "F32", 11},
    {DType::f64, "f64", 8, DTypeCategory::floating, 3, DType::f64, "F64", 12},
    {DType::bf16, "bf16", 2, DTypeCategory::floating, 1, DType::f32, "BF16", 8},
    {DType::f16, "f16", 2, DTypeCategory::floating, 1, DType::f32, "F16", 7},
};
inline constexpr std::size_t dtype_count = std::size(dtype_table);
static_assert(
    [] {
      for (std::size_t k = 0; k < dtype_count; ++k)
        if (static_cast<std::size_t>(dtype_table[k].dtype) != k) return false;
      return true;
    }(),
    "dtype_table lists the dtypes in the order of their stable numbers");

/// Whether `t` is one of the dtypes above (a number read from a file or a plan may not be).
constexpr bool is_dtype(DType t) { return static_cast<std::size_t>(t) < dtype_count; }
constexpr bool is_dtype(std::int64_t number) { return number >= 0 && static_cast<std::size_t>(number) < dtype_count; }

/// The properties of `t`, which is_dtype.
constexpr const DTypeInfo& dtype_info(DType t) { return dtype_table[static_cast<std::size_t>(t)]; }

namespace detail {
/// The table's fields that tracing reads on every op, in four bytes, with an entry for each
/// value of DType's byte: a predicate is then one load, with no range check and no branch.
/// Values that are no dtype read zeros: no size, boolean, not low-precision.
struct DTypeTraits {
  std::uint8_t size;
  DTypeCategory category;
  std::uint8_t rank;
  bool low_precision;
};
inline constexpr auto dtype_traits = [] {
  std::array<DTypeTraits, 256> traits{};
  for (const DTypeInfo& d : dtype_table)
    traits[static_cast<std::size_t>(d.dtype)] = {static_cast<std::uint8_t>(d.size), d.category,
                                                  static_cast<std::uint8_t>(d.rank), d.compute != d.dtype};
  return traits;
}();
static_assert(sizeof(std::underlying_type_t<DType>) == 1, "dtype_traits has an entry for every value of the byte");
constexpr const DTypeTraits& traits_of(DType t) { return dtype_traits[static_cast<std::uint8_t>(t)]; }
}  // namespace detail

constexpr std::size_t itemsize(DType t) { return detail::traits_of(t).size; }
constexpr std::string_view name(DType t) { return is_dtype(t) ? dtype_info(t).name : "?"; }

inline std::ostream& operator<<(std::ostream& os, DType t) { return os << name(t); }

/// What kind of number `t` holds (boolean for a value that is no dtype).
constexpr DTypeCategory category(DType t) { return detail::traits_of(t).category; }
constexpr bool is_floating(DType t) { return category(t) == DTypeCategory::floating; }
constexpr bool is_integral(DType t) { return category(t) == DTypeCategory::integral; }
/// A float stored narrower than it computes (bf16): each op on it rounds once to it.
constexpr bool is_low_precision(DType t) { return detail::traits_of(t).low_precision; }

/// The element type a C++ type stores as.
template <class T> struct dtype_of;
/// @cond
template <> struct dtype_of<bool> { static constexpr DType value = DType::boolean; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<float16> { static constexpr DType value = DType::f16; };
/// @endcond
template <class T> inline constexpr DType dtype_v = dtype_of<std::remove_cv_t<T>>::value;

/// A type tag for dtype dispatch.
template <class T> struct Tag { using type = T; /**< The tagged type. */ };

/// Calls `f(Tag<T>{})` with the C++ type that computing kernels use for `t`. Low-precision
/// floats (bf16, f16) have none: the tracer records their arithmetic as f32 between casts
/// (lt::record), so only conversions and copies see them (visit_storage).
template <class F>
decltype(auto) visit(DType t, F&& f) {
  switch (t) {
    case DType::boolean: return f(Tag<bool>{});
    case DType::i32: return f(Tag<std::int32_t>{});
    case DType::i64: return f(Tag<std::int64_t>{});
    case DType::f32: return f(Tag<float>{});
    case DType::f64: return f(Tag<double>{});
    case DType::bf16:
    case DType::f16: break;
  }
  fail("dtype ", name(t), " has no computing kernels (it computes in f32)");
}

/// Calls `f(Tag<T>{})` with the C++ type stored by `t`, bfloat16 and float16 included: for conversions
/// and copies, which `static_cast` between any two of these types.
template <class F>
decltype(auto) visit_storage(DType t, F&& f) {
  if (t == DType::bf16) return f(Tag<bfloat16>{});
  if (t == DType::f16) return f(Tag<float16>{});
  return visit(t, std::forward<F>(f));
}

/// Promotion of two dtypes of the same standing (torch.promote_types): the higher category;
/// within one, the wider; two different dtypes of one width (bf16 and f16) meet at the
/// narrowest wider one (f32).
constexpr DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const detail::DTypeTraits &x = detail::traits_of(a), &y = detail::traits_of(b);
  if (x.category != y.category) return x.category > y.category ? a : b;
  if (x.rank != y.rank) return x.rank > y.rank ? a : b;
  for (const DTypeInfo& wider : dtype_table)
    if (wider.category == x.category && wider.rank == x.rank + 1) return wider.dtype;
  fail("promote_types: ", name(a), " and ", name(b), " have no common dtype");
}

/// Whether a value of dtype `from` may be stored in a tensor of dtype `to` by an in-place op
/// (torch.can_cast): never from floating to integral or bool, nor from integral to bool.
constexpr bool can_cast(DType from, DType to) {
  if (is_floating(from)) return is_floating(to);
  if (is_integral(from)) return to != DType::boolean;
  return true;
}

/// The dtype PyTorch gives a Python scalar of this kind when it meets tensors.
constexpr DType default_float = DType::f32;

/// What an operand contributes to type promotion (at::native::result_type): tensors with
/// dimensions outrank zero-dim tensors, which outrank wrapped scalars, unless a lower group
/// is of a higher category (bool < integer < floating).
class ResultType {
 public:
  /// Where an operand stands: a tensor with dimensions, a zero-dim tensor, or a wrapped C++ scalar.
  enum class Standing { dimensioned, zero_dim, wrapped };
  /// Adds an operand of dtype `t` standing at `s` (a floating scalar counts as the default float).
  constexpr void add(DType t, Standing s) {
    if (s == Standing::wrapped && is_floating(t)) t = default_float;
    Group& g = groups_[static_cast<std::size_t>(s)];
    g.dtype = g.seen ? promote_types(g.dtype, t) : t;
    g.seen = true;
  }
  /// The promoted dtype of the operands added so far.
  constexpr DType result() const {
    const auto& [dimensioned, zero_dim, wrapped] = groups_;
    return combine(dimensioned, combine(zero_dim, wrapped)).dtype;
  }

 private:
  struct Group {
    DType dtype{};
    bool seen = false;
  };
  /// The higher standing's dtype, unless the lower's is of a higher category.
  static constexpr Group combine(Group hi, Group lo) {
    if (!hi.seen) return lo;
    if (!lo.seen || category(lo.dtype) <= category(hi.dtype)) return hi;
    return {promote_types(hi.dtype, lo.dtype), true};
  }
  std::array<Group, 3> groups_{};
};

}  // namespace lt

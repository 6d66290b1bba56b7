#pragma once
// The attributes of a fragment node. A fragment's structure is its body (in its descriptor);
// what varies from one use to the next lives in the node's attributes, laid out as
//   ints:   [structural hash, compute dtype, slot count, input of each slot...,
//            then for each step that reads attributes: n_ints, its ints..., n_values, n_floats]
//   values: the data ints of those steps, in step order
//   floats: the floats of those steps, in step order.
// Slots map to inputs because a tensor used twice (x * x) is one input of the node.
#include <cstdint>
#include <span>

#include "lazytensor/core/scalar.hpp"
#include "lazytensor/ops/attrs_key.hpp"
#include "lazytensor/ops/descriptor.hpp"

namespace lt::expr {

using fragment_words::compute_at, fragment_words::slot_count_at, fragment_words::slot_map_at;

/// Builds a fragment's attributes.
class FragmentAttrsBuilder {
 public:
  // Words are appended one at a time: a list copy of a few words is a call to memmove, and
  // tracing builds these attributes for every fragment it records.
  FragmentAttrsBuilder(hash_t structural_hash, int slots) {
    attrs_.ints.reserve(slot_map_at + static_cast<std::size_t>(slots) + 4);
    for (std::int64_t w : {static_cast<std::int64_t>(structural_hash), std::int64_t{0}, std::int64_t{slots}})
      attrs_.ints.push_back(w);
  }
  void add_slot_input(int input) { attrs_.ints.push_back(input); }
  void add_step(const Attrs& a) {
    attrs_.ints.push_back(static_cast<std::int64_t>(a.ints.size()));
    attrs_.ints.insert(attrs_.ints.end(), a.ints.begin(), a.ints.end());
    attrs_.ints.push_back(static_cast<std::int64_t>(a.values.size()));
    attrs_.ints.push_back(static_cast<std::int64_t>(a.floats.size()));
    attrs_.values.insert(attrs_.values.end(), a.values.begin(), a.values.end());
    attrs_.floats.insert(attrs_.floats.end(), a.floats.begin(), a.floats.end());
  }
  /// A scalar operand, with the attributes of leaf::scalar (ops/leaf.hpp's ScalarAttrs):
  /// ints {dtype}, values {integer value}, floats {value}.
  void add_scalar(const Scalar& s) {
    for (std::int64_t w : {std::int64_t{1}, static_cast<std::int64_t>(s.dtype), std::int64_t{1}, std::int64_t{1}})
      attrs_.ints.push_back(w);
    attrs_.values.push_back(s.i);
    attrs_.floats.push_back(s.f);
  }
  void set_compute(DType t) { attrs_.ints[compute_at] = static_cast<std::int64_t>(t); }
  Attrs& attrs() { return attrs_; }

 private:
  Attrs attrs_;
};

/// Reads a fragment's attributes: the slot map, then each attribute-reading step in order.
class FragmentAttrsReader {
 public:
  explicit FragmentAttrsReader(const Attrs& a)
      : a_(a), int_pos_(slot_map_at + static_cast<std::size_t>(a.ints[slot_count_at])) {}
  static DType compute(const Attrs& a) { return static_cast<DType>(a.ints[compute_at]); }
  int slot_count() const { return static_cast<int>(a_.ints[slot_count_at]); }
  int input_of(int slot) const { return static_cast<int>(a_.ints[slot_map_at + static_cast<std::size_t>(slot)]); }
  /// The attributes of the next attribute-reading step, into `out` (its storage is reused).
  void next(Attrs& out) {
    auto n = static_cast<std::size_t>(a_.ints[int_pos_++]);
    out.ints.assign(a_.ints.begin() + static_cast<std::ptrdiff_t>(int_pos_),
                    a_.ints.begin() + static_cast<std::ptrdiff_t>(int_pos_ + n));
    int_pos_ += n;
    auto v = static_cast<std::size_t>(a_.ints[int_pos_++]);
    out.values.assign(a_.values.begin() + static_cast<std::ptrdiff_t>(value_pos_),
                      a_.values.begin() + static_cast<std::ptrdiff_t>(value_pos_ + v));
    value_pos_ += v;
    auto m = static_cast<std::size_t>(a_.ints[int_pos_++]);
    out.floats.assign(a_.floats.begin() + static_cast<std::ptrdiff_t>(float_pos_),
                      a_.floats.begin() + static_cast<std::ptrdiff_t>(float_pos_ + m));
    float_pos_ += m;
  }

 private:
  const Attrs& a_;
  std::size_t int_pos_;
  std::size_t value_pos_ = 0, float_pos_ = 0;
};

}  // namespace lt::expr

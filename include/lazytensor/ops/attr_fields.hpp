#pragma once
// Typed op attributes. Each op that takes attributes has a small struct naming its fields once
// (LT_ATTR_FIELDS); `encode` lays them out in the flat words of Attrs, which hashes and plan
// files keep, and `decode` reads them back, checking every count. Nothing else reads or builds
// attribute words by position.
//
// Field types and the words they take, in field order:
//   an integer, bool or enum (DType, flags): one structural int
//   AttrData<I>: one data int (read from the live graph each run, never part of a key)
//   double: one float (always data); std::optional<double>: one float or none, the last float
//   AttrWords: the rest of the structural ints (dims, a shape, pads): the last int field
//   a struct with LT_ATTR_FIELDS: its fields, in place
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "lazytensor/core/error.hpp"
#include "lazytensor/ops/descriptor.hpp"

namespace lt {

/// The trailing structural ints of an op's attributes. Decoded, it views the Attrs it came
/// from, so a decoded struct lives no longer than its Attrs.
using AttrWords = std::span<const std::int64_t>;

/// An integer attribute that is data, not structure (a seed, a fill value).
template <class I>
struct AttrData {
  I value{};
};

/// Names a struct's fields for encode and decode, in their order in the words.
#define LT_ATTR_FIELDS(...)                         \
  template <class LtIo>                             \
  void fields(LtIo& lt_io) {                        \
    lt_io(__VA_ARGS__);                             \
  }                                                 \
  template <class LtIo>                             \
  void fields(LtIo& lt_io) const {                  \
    lt_io(__VA_ARGS__);                             \
  }

namespace detail {

class AttrWriter;
template <class T> struct is_attr_data : std::false_type {};
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class I> struct is_attr_data<AttrData<I>> : std::true_type {};
template <class T>
concept IntWord = std::integral<T> || std::is_enum_v<T>;
template <class T>
concept HasAttrFields = requires(T& t, AttrWriter& w) { t.fields(w); };

class AttrWriter {
 public:
  explicit AttrWriter(Attrs& out) : out_(out) {}
  template <class... F> void operator()(const F&... fields) { (put(fields), ...); }

 private:
  template <class F> void put(const F& f) {
    if constexpr (std::is_same_v<F, AttrWords>) {
      out_.ints.insert(out_.ints.end(), f.begin(), f.end());
    } else if constexpr (is_attr_data<F>::value) {
      out_.values.push_back(static_cast<std::int64_t>(f.value));
    } else if constexpr (std::is_floating_point_v<F>) {
      out_.floats.push_back(static_cast<double>(f));
    } else if constexpr (is_optional<F>::value) {
      static_assert(std::is_floating_point_v<typename F::value_type>, "an optional attribute is a real");
      if (f) out_.floats.push_back(static_cast<double>(*f));
    } else if constexpr (HasAttrFields<F>) {
      f.fields(*this);
    } else {
      static_assert(IntWord<F>, "an attribute field is an integer, bool, enum, double, AttrData or AttrWords");
      out_.ints.push_back(static_cast<std::int64_t>(f));
    }
  }
  Attrs& out_;
};

class AttrReader {
 public:
  explicit AttrReader(const Attrs& in) : in_(in) {}
  template <class... F> void operator()(F&... fields) { (get(fields), ...); }
  void check_all_read() const {
    LT_CHECK(ints_ == in_.ints.size() && values_ == in_.values.size() && floats_ == in_.floats.size(),
             "expected ", ints_, " integer, ", values_, " data and ", floats_, " real attributes, got ",
             in_.ints.size(), ", ", in_.values.size(), " and ", in_.floats.size());
  }

 private:
  template <class F> void get(F& f) {
    if constexpr (std::is_same_v<F, AttrWords>) {
      f = AttrWords(in_.ints.data() + ints_, in_.ints.size() - ints_);
      ints_ = in_.ints.size();
    } else if constexpr (is_attr_data<F>::value) {
      f.value = static_cast<decltype(f.value)>(next(in_.values, values_, "data"));
    } else if constexpr (std::is_floating_point_v<F>) {
      f = static_cast<F>(next(in_.floats, floats_, "real"));
    } else if constexpr (is_optional<F>::value) {
      if (floats_ < in_.floats.size()) f = static_cast<typename F::value_type>(in_.floats[floats_++]);
      else f.reset();
    } else if constexpr (HasAttrFields<F>) {
      f.fields(*this);
    } else if constexpr (std::is_same_v<F, bool>) {
      f = next(in_.ints, ints_, "integer") != 0;
    } else {
      f = static_cast<F>(next(in_.ints, ints_, "integer"));
    }
  }
  template <class List>
  static auto next(const List& list, std::size_t& at, const char* what) -> std::remove_cvref_t<decltype(list[0])> {
    LT_CHECK(at < list.size(), "expected more than ", list.size(), " ", what, " attributes");
    return list[at++];
  }
  const Attrs& in_;
  std::size_t ints_ = 0, values_ = 0, floats_ = 0;
};

}  // namespace detail

/// The flat words of typed attributes `a`.
template <class A>
Attrs encode(const A& a) {
  Attrs out;
  detail::AttrWriter w(out);
  a.fields(w);
  return out;
}

/// Typed attributes from their flat words; lt::Error when the counts do not match A's fields.
template <class A>
A decode(const Attrs& words) {
  A a{};
  detail::AttrReader r(words);
  a.fields(r);
  r.check_all_read();
  return a;
}

/// As decode, but attributes with no words at all are A's defaults (ops whose attributes a
/// caller may leave out, as gelu's form).
template <class A>
A decode_or_default(const Attrs& words) {
  return words.empty() ? A{} : decode<A>(words);
}

}  // namespace lt

#pragma once
// The structure of an op's attributes, apart from their data: what enters an IR node's hash
// and what a cached plan must match. Data words (`values` and `floats`) are read from the live
// graph each run, so only their counts enter, and for a C++ scalar operand whether it is 0, 1
// or another number.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>
#include <vector>

#include "lazytensor/core/env.hpp"
#include "lazytensor/ops/descriptor.hpp"

namespace lt {

/// Where a fragment's attributes keep their prefix: [structural hash, compute dtype, slot
/// count, the input of each slot...] (expr/fragment_attrs.hpp lays them out).
namespace fragment_words {
inline constexpr std::size_t hash_at = 0, compute_at = 1, slot_count_at = 2, slot_map_at = 3;
}

namespace detail {
/// LT_NO_SPECIAL_SCALARS=1: 0 and 1 are parameters like any other scalar value.
inline bool special_scalars_enabled() {
  static const bool enabled = !env_flag("LT_NO_SPECIAL_SCALARS", false);
  return enabled;
}
inline std::int64_t scalar_class(double v) {
  if (!special_scalars_enabled()) return 2;
  return v == 0 ? 0 : v == 1 ? 1 : 2;
}

/// Calls word(w) for each structural word of one op's attributes, `ints` from `pos` and
/// `floats` from `fpos` (a fragment step's share), advancing both.
template <class Word>
void step_words(const OpDesc& op, const Attrs& a, std::size_t n_ints, std::size_t& pos, std::size_t n_values,
                std::size_t n_floats, std::size_t& fpos, Word&& word) {
  for (std::size_t k = 0; k < n_ints; ++k) word(a.ints[pos + k]);
  word(static_cast<std::int64_t>(n_values));
  word(static_cast<std::int64_t>(n_floats));
  if (op.folds_special_values && n_floats > 0) word(scalar_class(a.floats[fpos]));
  pos += n_ints;
  fpos += n_floats;
}
}  // namespace detail

/// Calls word(w) for every structural word of `a`, the attributes of `op`. A fragment's words
/// follow its layout (expr/fragment_attrs.hpp): the slot prefix, then each attribute-reading
/// step's share by that step's op.
template <class Word>
void for_each_structural_word(const OpDesc& op, const Attrs& a, Word&& word) {
  std::size_t pos = 0, fpos = 0;
  if (op.body.empty()) {
    detail::step_words(op, a, a.ints.size(), pos, a.values.size(), a.floats.size(), fpos, word);
    return;
  }
  const std::size_t prefix =
      fragment_words::slot_map_at + static_cast<std::size_t>(a.ints[fragment_words::slot_count_at]);
  for (; pos < prefix; ++pos) word(a.ints[pos]);
  for (const FragmentStep& s : op.body) {
    if (s.op == nullptr || !s.reads_attrs) continue;
    auto n = static_cast<std::size_t>(a.ints[pos++]);
    word(static_cast<std::int64_t>(n));
    std::size_t ints_at = pos;
    auto v = static_cast<std::size_t>(a.ints[pos + n]);
    auto m = static_cast<std::size_t>(a.ints[pos + n + 1]);
    std::size_t after = pos + n + 2;
    detail::step_words(*s.op, a, n, ints_at, v, m, fpos, word);
    pos = after;
  }
}

/// True when the attributes have no data words: they are hashed and compared as they are.
inline bool all_structural(const OpDesc& op, const Attrs& a) {
  return op.body.empty() && !op.folds_special_values && a.values.empty() && a.floats.empty();
}

/// Words gathered for one hash call: on the stack while they are few.
class HashWords {
 public:
  // Small enough to inline: tracing puts a dozen words per op.
  void put(std::int64_t w) {
    if (n_ < inline_words) small_[n_++] = w;
    else put_on_heap(w);
  }
  hash_t hash(hash_t seed = 0) const {
    const std::int64_t* words = large_.empty() ? small_.data() : large_.data();
    return hash_bytes(words, n_ * sizeof(std::int64_t), seed);
  }

 private:
  [[gnu::noinline]] void put_on_heap(std::int64_t w) {
    if (large_.empty()) large_.assign(small_.begin(), small_.end());
    large_.push_back(w);
    ++n_;
  }

  static constexpr std::size_t inline_words = 48;
  std::array<std::int64_t, inline_words> small_;
  std::vector<std::int64_t> large_;
  std::size_t n_ = 0;
};

/// The hash of the structural words of some attributes, and their token: attributes with the
/// same nonzero token are those of one op with the same ints, float bits and counts (their data
/// ints may differ), so have the same structure. A cached plan and a bound row loop compare
/// tokens where they would otherwise compare every attribute of every node on each run.
struct StructuralDigest {  // no member initialisers: kept in a thread_local table read unguarded
  hash_t hash;
  std::uint64_t token;  // 0: none
};

namespace detail {
inline std::uint64_t next_attrs_token() {
  static std::atomic<std::uint64_t> issued{0};
  return issued.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace detail

/// The digest of `a`, the attributes of `op`. A loop traces the same attributes every step, and
/// walking a fragment's layout to find its words costs about as much as the rest of making the
/// node: so each thread remembers, for a few ops each, the last attributes it hashed (all their
/// ints, their data count and the bits of their floats, of which the words are a function), their
/// hash and the token issued for them.
inline StructuralDigest structural_digest(const OpDesc& op, const Attrs& a) {
  constexpr std::size_t max_ints = 16, max_floats = 4, entries = 32;
  struct Entry {
    const OpDesc* op;
    std::uint32_t n_ints, n_values, n_floats;
    std::array<std::int64_t, max_ints> ints;
    std::array<std::uint64_t, max_floats> float_bits;
    StructuralDigest digest;
  };
  auto hash = [&] {
    HashWords words;
    for_each_structural_word(op, a, [&](std::int64_t w) { words.put(w); });
    return words.hash();
  };
  if (a.ints.size() > max_ints || a.floats.size() > max_floats) return {hash(), 0};
  static thread_local std::array<Entry, entries> memo;  // trivially constructed: no guard on access
  Entry& e = memo[(reinterpret_cast<std::uintptr_t>(&op) * 0x9E3779B97F4A7C15u) >> (64 - std::countr_zero(entries))];
  // Word by word, leaving at the first difference: the words were stored one by one just
  // before, and a compiler's wide loads of them would wait for those stores to land.
  auto same = [&] {
    if (e.op != &op || e.n_ints != a.ints.size() || e.n_values != a.values.size() || e.n_floats != a.floats.size())
      return false;
    for (std::size_t k = 0; k < a.ints.size(); ++k)
      if (e.ints[k] != a.ints[k]) return false;
    for (std::size_t k = 0; k < a.floats.size(); ++k)
      if (e.float_bits[k] != std::bit_cast<std::uint64_t>(a.floats[k])) return false;
    return true;
  };
  if (same()) return e.digest;
  e.op = &op;
  e.n_ints = static_cast<std::uint32_t>(a.ints.size());
  e.n_values = static_cast<std::uint32_t>(a.values.size());
  e.n_floats = static_cast<std::uint32_t>(a.floats.size());
  std::copy(a.ints.begin(), a.ints.end(), e.ints.begin());
  for (std::size_t k = 0; k < a.floats.size(); ++k) e.float_bits[k] = std::bit_cast<std::uint64_t>(a.floats[k]);
  e.digest = {hash(), detail::next_attrs_token()};
  return e.digest;
}

/// Appends the structural words of `a` to `words`: what a cached plan stores to check a graph
/// against.
inline void append_structural_words(const OpDesc& op, const Attrs& a, std::vector<std::int64_t>& words) {
  if (all_structural(op, a)) {
    words.insert(words.end(), a.ints.begin(), a.ints.end());
    return;
  }
  for_each_structural_word(op, a, [&](std::int64_t w) { words.push_back(w); });
}

/// Whether `a` has the structural words `words`, without making a copy.
inline bool same_structure(const OpDesc& op, const Attrs& a, std::span<const std::int64_t> words) {
  if (all_structural(op, a)) return std::ranges::equal(a.ints, words);
  std::size_t k = 0;
  bool same = true;
  for_each_structural_word(op, a, [&](std::int64_t w) {
    same = same && k < words.size() && words[k] == w;
    ++k;
  });
  return same && k == words.size();
}

}  // namespace lt

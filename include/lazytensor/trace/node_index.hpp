#pragma once
// Node -> position in a walk of a step graph: an open-addressing table, because a barrier
// looks up every edge of the graph and std::unordered_map's node allocations dominate that.
#include <bit>
#include <cstdint>
#include <vector>

#include "lazytensor/core/error.hpp"

namespace lt {

struct Node;

class NodeIndex {
 public:
  /// Forgets every entry; keeps the table's memory for the next walk.
  void clear() {
    if (size_ == 0) return;
    for (Slot& s : slots_) s.key = nullptr;
    size_ = 0;
  }
  bool contains(const Node* n) const { return find(n) != nullptr; }
  /// Inserts n -> position unless n is there; returns whether it was inserted.
  bool emplace(const Node* n, int position) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    Slot& s = probe(n);
    if (s.key != nullptr) return false;
    s = {n, position};
    ++size_;
    return true;
  }
  int at(const Node* n) const {
    const Slot* s = find(n);
    LT_CHECK(s != nullptr, "internal: a node is missing from its graph's walk");
    return s->position;
  }

 private:
  struct Slot {
    const Node* key = nullptr;
    int position = 0;
  };
  std::size_t home(const Node* n) const {
    auto x = reinterpret_cast<std::uintptr_t>(n);
    return static_cast<std::size_t>((x >> 4) * 0x9e3779b97f4a7c15ull >> shift_);
  }
  Slot& probe(const Node* n) {
    std::size_t mask = slots_.size() - 1, i = home(n);
    while (slots_[i].key != nullptr && slots_[i].key != n) i = (i + 1) & mask;
    return slots_[i];
  }
  const Slot* find(const Node* n) const {
    if (slots_.empty()) return nullptr;
    std::size_t mask = slots_.size() - 1, i = home(n);
    while (slots_[i].key != nullptr) {
      if (slots_[i].key == n) return &slots_[i];
      i = (i + 1) & mask;
    }
    return nullptr;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    std::size_t n = old.empty() ? 64 : old.size() * 2;
    slots_.assign(n, Slot{});
    shift_ = 64 - std::countr_zero(n);
    size_ = 0;
    for (const Slot& s : old)
      if (s.key != nullptr) {
        probe(s.key) = s;
        ++size_;
      }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  int shift_ = 58;
};

}  // namespace lt

#pragma once
// The order in which a step graph runs, how many readers each value has, and the graph's key.
#include <mutex>
#include <span>
#include <type_traits>
#include <vector>

#include "lazytensor/trace/node_index.hpp"
#include "lazytensor/trace/node.hpp"
#include "lazytensor/trace/pending.hpp"

namespace lt {

/// Per position, a list of values, stored flat: one allocation for all the lists, not one per
/// node.
template <class T>
struct FlatLists {
  std::vector<int> offsets{0};  // list p is flat[offsets[p], offsets[p + 1])
  std::vector<T> flat;

  std::size_t size() const { return offsets.size() - 1; }
  std::span<const T> operator[](std::size_t p) const {
    return {flat.data() + offsets[p], static_cast<std::size_t>(offsets[p + 1] - offsets[p])};
  }
  /// The reverse edges of lists of positions: list q holds every p whose list holds q, in
  /// increasing p.
  FlatLists transposed() const
    requires std::is_same_v<T, int>
  {
    FlatLists t;
    t.offsets.assign(size() + 1, 0);
    for (int q : flat) ++t.offsets[static_cast<std::size_t>(q) + 1];
    for (std::size_t k = 1; k < t.offsets.size(); ++k) t.offsets[k] += t.offsets[k - 1];
    t.flat.resize(flat.size());
    std::vector<int> next(t.offsets.begin(), t.offsets.end() - 1);
    for (std::size_t p = 0; p < size(); ++p)
      for (int q : (*this)[p]) t.flat[static_cast<std::size_t>(next[static_cast<std::size_t>(q)]++)] = static_cast<int>(p);
    return t;
  }
  /// Ends list size() - 1; the next push_back starts a new one.
  void close_list() { offsets.push_back(static_cast<int>(flat.size())); }
  void clear() {
    offsets.assign(1, 0);
    flat.clear();
  }
  friend bool operator==(const FlatLists&, const FlatLists&) = default;
};

/// A graph's edges: per position, the positions of its inputs (or of its readers).
using Adjacency = FlatLists<int>;

/// The order in which to run a graph, and when each value can be freed.
struct Schedule {
  std::vector<const Node*> order;           // producers before consumers
  Adjacency inputs;                         // per step: positions of its inputs in `order`
  std::vector<int> uses;                    // per step: how many later steps read it
  std::vector<int> roots;                   // per root: its position in `order`
  /// The graph's structure: each node's hash, in order, with its inputs' positions, and the
  /// roots' positions. Equal keys mean equal graphs up to data (a plan cache checks the rest).
  hash_t key = 0;

  Schedule() = default;
  Schedule(const Schedule&) = default;
  Schedule(Schedule&&) noexcept = default;
  Schedule& operator=(const Schedule&) = default;
  Schedule& operator=(Schedule&&) noexcept = default;
  ~Schedule();
};

namespace detail {

/// The lists of the last schedule dropped, which the next walk fills again. A large graph's
/// lists take megabytes, which the C library hands back to the system when they are freed:
/// every step of a loop would then fault them in anew, a page at a time.
class SpareScheduleLists {
 public:
  /// Keeps `s`'s lists when they are larger than those kept.
  void keep(Schedule& s) noexcept {
    if (s.order.capacity() == 0) return;  // moved from, or empty
    std::lock_guard lock(mu_);
    if (s.order.capacity() <= spare_.order.capacity()) return;
    swap_lists(s, spare_);
  }
  /// Puts the lists kept, emptied, into `s`.
  void lend(Schedule& s) {
    std::lock_guard lock(mu_);
    swap_lists(s, spare_);
    s.order.clear();
    s.inputs.clear();
    s.uses.clear();
    s.roots.clear();
  }

 private:
  static void swap_lists(Schedule& a, Schedule& b) noexcept {
    a.order.swap(b.order);
    a.inputs.offsets.swap(b.inputs.offsets);
    a.inputs.flat.swap(b.inputs.flat);
    a.uses.swap(b.uses);
    a.roots.swap(b.roots);
  }
  std::mutex mu_;  // schedules are dropped on the device's worker as well as on tracing threads
  Schedule spare_;
};

inline SpareScheduleLists& spare_schedule_lists() {
  static auto* spare = new SpareScheduleLists;  // never destroyed: schedules may outlive statics
  return *spare;
}

}  // namespace detail

inline Schedule::~Schedule() { detail::spare_schedule_lists().keep(*this); }

namespace detail {

/// Fills `s` from a walk of `roots` that records positions in `position`, in one pass over the
/// nodes: a large graph does not fit in cache, and each further pass would miss on every node.
/// Returns the pending leaves met.
template <class Index>
std::vector<const Node*> walk_schedule(Schedule& s, std::span<const NodePtr> roots, Index& position) {
  std::vector<const Node*> pending;
  hash_t key = 0;
  auto placed = [&](const Node* node) {
    for (const NodePtr& i : node->inputs) {
      int p = position.at(i.get());
      s.inputs.flat.push_back(p);
      ++s.uses[static_cast<std::size_t>(p)];
    }
    s.inputs.close_list();
    s.uses.push_back(0);
    key = hash_combine(key, node->hash);
    if (pending_step(*node) != nullptr) pending.push_back(node);
  };
  s.inputs.offsets.reserve(s.order.capacity() + 1);
  s.inputs.flat.reserve(s.order.capacity() * 2);
  s.uses.reserve(s.order.capacity());
  for (const NodePtr& root : roots) {
    append_topological(root.get(), s.order, position, placed);
    s.roots.push_back(position.at(root.get()));
  }
  s.key = hash_combine(hash_combine(key, s.order.size()), roots.size());
  return pending;
}

}  // namespace detail

/// Topological order over everything the roots need, computed iteratively (graphs are deep).
inline Schedule make_schedule(std::span<const NodePtr> roots) {
  Schedule s;
  detail::spare_schedule_lists().lend(s);
  thread_local std::size_t last_size = 0;  // a loop's graphs are alike: size the order for it
  s.order.reserve(last_size);
  std::vector<const Node*> pending;
  if (NodeMarks marks; marks.owns()) {
    pending = detail::walk_schedule(s, roots, marks);
  } else {
    thread_local NodeIndex position;  // reused: no allocation per step once warm
    position.clear();
    pending = detail::walk_schedule(s, roots, position);
  }
  last_size = s.order.size();
  hash_t key = s.key;
  key = hash_bytes(s.inputs.flat.data(), s.inputs.flat.size() * sizeof(int), key);
  key = hash_bytes(s.inputs.offsets.data(), s.inputs.offsets.size() * sizeof(int), key);
  key = hash_bytes(s.roots.data(), s.roots.size() * sizeof(int), key);
  s.key = key;
  for (int r : s.roots) ++s.uses[static_cast<std::size_t>(r)];  // roots outlive the run
  // A pending leaf's value comes from a queued step: the graph runs once that step has run.
  for (const Node* node : pending) await_value(*node);
  return s;
}

}  // namespace lt

#pragma once
// IR node of a step graph. Immutable once made, but for a pending leaf's value, which its step
// writes once; shared by the tensors and nodes that use it.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "lazytensor/core/block_pool.hpp"
#include "lazytensor/core/hash.hpp"
#include "lazytensor/core/site.hpp"
#include "lazytensor/trace/node_index.hpp"
#include "lazytensor/ops/attrs_key.hpp"

namespace lt {

struct Node;
using NodePtr = std::shared_ptr<const Node>;
struct PendingStep;  // trace/pending.hpp
struct AutocastCopies;  // trace/autocast_cache.hpp

/// A node's inputs: up to three in the node itself, more (cat, stack) in an array on the heap. A
/// walk then reads a node's edges from the node's own cache lines, and tracing an op allocates
/// once less. The array is a bare pointer, its length the count: a vector would add 16 bytes to
/// every node, and a large graph's walk and compile read its nodes from memory.
class NodeInputs {
 public:
  NodeInputs() = default;
  explicit NodeInputs(std::vector<NodePtr>&& v)
      : NodeInputs(v.size(), [&](std::size_t k) { return std::move(v[k]); }) {}
  /// The producers input(0) ... input(count - 1), with no vector in between for a few.
  template <class Input>
  NodeInputs(std::size_t count, Input&& input) : size_(static_cast<std::uint32_t>(count)) {
    if (count <= inline_count) {
      for (std::size_t k = 0; k < count; ++k) small_[k] = input(k);
    } else {
      large_ = std::make_unique<NodePtr[]>(count);
      for (std::size_t k = 0; k < count; ++k) large_[k] = input(k);
    }
  }
  NodeInputs(const NodeInputs& other) : NodeInputs(other.size(), [&](std::size_t k) { return other[k]; }) {}
  NodeInputs(NodeInputs&&) noexcept = default;
  NodeInputs& operator=(const NodeInputs& other) {
    if (this != &other) *this = NodeInputs(other);
    return *this;
  }
  NodeInputs& operator=(NodeInputs&& other) noexcept {
    release();
    small_ = std::move(other.small_);
    large_ = std::move(other.large_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  ~NodeInputs() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const NodePtr* begin() const { return size_ <= inline_count ? small_.data() : large_.get(); }
  const NodePtr* end() const { return begin() + size_; }
  const NodePtr& operator[](std::size_t k) const { return begin()[k]; }

 private:
  /// Where the outermost release on this thread collects the producers it is the last owner
  /// of; null when no release runs.
  static inline thread_local std::vector<NodePtr>* released_later_ = nullptr;

  /// Drops the producers without recursing: releasing the last owner of a chain of a million
  /// ops would otherwise free it node by node on the stack and overflow it. The outermost
  /// release frees, one at a time, what every release beneath it hands over.
  void release() noexcept {
    const bool small = size_ <= inline_count;
    std::span<NodePtr> held(small ? small_.data() : large_.get(), small || large_ ? size_ : 0);  // moved from: none
    auto hand_over = [&](std::vector<NodePtr>& later) {
      for (NodePtr& p : held)
        if (p && p.use_count() == 1) later.push_back(std::move(p));
    };
    if (released_later_ != nullptr) return hand_over(*released_later_);
    if (std::none_of(held.begin(), held.end(), [](const NodePtr& p) { return p && p.use_count() == 1; })) return;
    std::vector<NodePtr> later;
    released_later_ = &later;
    hand_over(later);
    while (!later.empty()) {
      NodePtr last = std::move(later.back());
      later.pop_back();
      last.reset();  // its own release hands its producers over to `later`
    }
    released_later_ = nullptr;
  }

  static constexpr std::size_t inline_count = 3;
  std::array<NodePtr, inline_count> small_;
  std::unique_ptr<NodePtr[]> large_;  // size_ of them, when more than inline_count
  std::uint32_t size_ = 0;
};

// What a barrier's walk reads (op, hash, its marks, inputs) comes first: the node's first two
// cache lines; the shape and attributes that compiling reads come after. A leaf's value lives
// in DataNode, so that the nodes of a large graph, nearly all computed, take less memory.
struct DataNode;
struct Node {
  const OpDesc* op;
  hash_t hash;  // structural: op, attribute structure, shape, dtype and the inputs' hashes; never data
  // The node's place in the walk that holds the walk lock (NodeMarks): a mark in the node, not a
  // table lookup per edge, keeps a large graph's walk linear.
  mutable std::uint64_t walk_number;
  mutable int walk_position;
  // The order in which a walk visits the first three inputs: data and views first (see
  // walked_first), fixed when the node is made so that the walk tests nothing per input.
  std::array<std::uint8_t, 3> walk_order;
  NodeInputs inputs;  // inputs own their producers; nothing points back
  Meta meta;
  Attrs attrs;
  std::uint64_t attrs_token;  // the token of `attrs` (ops/attrs_key.hpp), 0 when none
  // The user's line that recorded it (core/site.hpp), read by debug output only: last, out of
  // the lines a walk reads, and never part of the hash.
  Site site;

  bool is_data() const { return op->kind == OpKind::leaf; }
  /// The value part of a device_data leaf (is_data() nodes only).
  const DataNode& leaf() const;
};

/// A device_data leaf: its value, or, while pending, the queued step that writes it.
struct DataNode : Node {
  // Pending leaves only: the queued step that writes `data`; read `data` after step->wait().
  std::shared_ptr<PendingStep> step;
  Array data;  // a pending leaf's is written by its step (see step)
  // Autocast's casts of this value, made once and reused while the leaf lives (a leaf's value
  // never changes): freed with it. Changed under the autocast cache's lock only.
  mutable std::shared_ptr<AutocastCopies> autocast_copies;
};

// Only device_data is a leaf, and only make_data_node and make_pending_leaf make one.
inline const DataNode& Node::leaf() const { return static_cast<const DataNode&>(*this); }

/// The queued step that writes leaf `n`'s value, or null (not a leaf, or its value is there).
inline PendingStep* pending_step(const Node& n) { return n.is_data() ? n.leaf().step.get() : nullptr; }

/// Inputs a walk places before an op's computed inputs: data and views (a bias reshaped to
/// [C, 1, 1], say). They then precede the group that computes the other inputs, and an
/// elementwise op reading both can join that group, which a value placed after its start
/// cannot feed.
inline bool walked_first(const Node& n) { return n.is_data() || n.op->view != nullptr; }

/// Input indices in the order a walk takes them: those walked first, then the rest, each in
/// input order. Inputs past the third are walked in their own order.
inline std::array<std::uint8_t, 3> walk_order(const NodeInputs& inputs) {
  std::array<std::uint8_t, 3> order{0, 1, 2};
  if (inputs.size() < 2) return order;  // one input or none: nothing to reorder
  const std::size_t n = std::min<std::size_t>(inputs.size(), order.size());
  std::size_t at = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t k = 0; k < n; ++k)
      if (walked_first(*inputs[k]) == (pass == 0)) order[at++] = static_cast<std::uint8_t>(k);
  return order;
}

/// Makes a compute node recorded at `site`; its hash is combined here, once, so the barrier only
/// combines roots. The site stays out of it: the same graph from other lines is the same graph.
inline NodePtr make_node(const OpDesc& op, Attrs&& attrs, NodeInputs&& inputs, const Meta& meta, const Site& site) {
  // One buffer of words, hashed once: tracing makes a node per op, and each hash call costs.
  HashWords words;
  words.put(static_cast<std::int64_t>(op.id) | static_cast<std::int64_t>(meta.dtype) << 16 |
            static_cast<std::int64_t>(meta.shape.rank()) << 24 | static_cast<std::int64_t>(meta.wrapped_number) << 32);
  for (std::int64_t d : meta.shape) words.put(d);
  words.put(static_cast<std::int64_t>(attrs.ints.size()));
  StructuralDigest digest{};
  if (all_structural(op, attrs)) {
    for (std::int64_t w : attrs.ints) words.put(w);
  } else {
    digest = structural_digest(op, attrs);
    words.put(static_cast<std::int64_t>(digest.hash));
  }
  for (const NodePtr& in : inputs) words.put(static_cast<std::int64_t>(in->hash));
  const std::array<std::uint8_t, 3> order = walk_order(inputs);
  // Made mutable (and handed out const) so that own_input may fill an input of a node just made.
  return std::allocate_shared<Node>(PoolAllocator<Node>{}, &op, words.hash(), 0u, 0, order, std::move(inputs), meta,
                                    std::move(attrs), digest.token, site);
}
inline NodePtr make_node(const OpDesc& op, Attrs attrs, std::vector<NodePtr> inputs, const Meta& meta,
                         const Site& site) {
  return make_node(op, std::move(attrs), NodeInputs(std::move(inputs)), meta, site);
}

/// Attributes kept from a node, with their token: whether a later node's attributes equal them
/// (a bound kernel serves it) then costs, while the tokens match, a compare of the data ints.
struct KeptAttrs {
  Attrs attrs;
  std::uint64_t token = 0;

  KeptAttrs() = default;
  explicit KeptAttrs(const Node& n) : attrs(n.attrs), token(n.attrs_token) {}
  /// Equal tokens mean equal ints and float bits: equal attributes once the data ints are
  /// equal too.
  bool same_as(const Node& n) const {
    if (token != 0 && n.attrs_token == token) return n.attrs.values == attrs.values;
    return n.attrs == attrs;
  }
};

/// A handle of `producer`'s node that owns nothing: an input of a node being made, which reads
/// only its hash and op, until own_input puts an owning handle in its place.
inline NodePtr borrowed_node(const NodePtr& producer) { return NodePtr(std::shared_ptr<void>(), producer.get()); }

/// Puts `producer` in input `k` of `node`, in place of the borrowed handle of it there. Only
/// for a node that make_node has just made and nothing else holds yet.
[[gnu::always_inline]] inline void own_input(const NodePtr& node, std::size_t k, NodePtr&& producer) {
  const_cast<NodePtr&>(node->inputs[k]) = std::move(producer);
}

/// The hash of a device_data leaf of `meta`: its shape and dtype, never its data.
inline hash_t data_node_hash(const OpDesc& device_data, const Meta& meta) {
  hash_t h = hash_combine(hash_combine(hash_combine(0, device_data.id), meta.dtype), meta.shape.rank());
  return hash_bytes(meta.shape.begin(), meta.shape.size() * sizeof(std::int64_t), h);
}

/// Makes a device_data leaf holding `data`. Only its shape and dtype enter the hash.
inline NodePtr make_data_node(const OpDesc& device_data, Array data) {
  Meta meta{data.view.shape, data.view.dtype, data.view.wrapped_number};
  hash_t h = data_node_hash(device_data, meta);
  return std::allocate_shared<const DataNode>(PoolAllocator<DataNode>{}, DataNode{{&device_data, h, 0, 0, {}, {}, meta, {}, 0, {}}, {}, std::move(data), {}});
}

/// Node -> position for one walk, written into the nodes themselves. One such walk runs at a
/// time in the process: the lock is tried, never waited for, and a walk that finds it taken
/// uses a NodeIndex instead.
class NodeMarks {
 public:
  NodeMarks() : lock_(walk_mutex(), std::try_to_lock) {
    if (lock_.owns_lock()) walk_ = ++walk_counter();  // 64 bits: never wraps, 0 means unmarked
  }
  bool owns() const { return lock_.owns_lock(); }
  bool contains(const Node* n) const { return n->walk_number == walk_; }
  bool emplace(const Node* n, int position) {
    if (contains(n)) return false;
    n->walk_number = walk_;
    n->walk_position = position;
    return true;
  }
  int at(const Node* n) const {
    LT_CHECK(contains(n), "internal: a node is missing from its graph's walk");
    return n->walk_position;
  }

 private:
  static std::mutex& walk_mutex() {
    static std::mutex m;
    return m;
  }
  static std::uint64_t& walk_counter() {
    static std::uint64_t n = 0;  // guarded by walk_mutex
    return n;
  }
  std::unique_lock<std::mutex> lock_;
  std::uint64_t walk_ = 0;
};

/// How far ahead a walk asks for nodes. A large graph's nodes are far out of cache, and each
/// is read after the last one's pointer: without a prefetch every node waits on memory. Going
/// down a chain, the next producers were made just before, so lie at lower addresses (the
/// node pool hands out blocks in order); coming back up, the nodes are on the walk's stack.
/// Memory's latency covers many nodes' work, so the distance is long (benchmarks/README.md).
inline constexpr std::size_t walk_prefetch_nodes = 64;
/// The distance between nodes made one after another: a node's pool block also holds the
/// shared count's header, which std::allocate_shared puts before the node (16 bytes in
/// libstdc++; where it is larger, the prefetch reads neighbouring lines: time, not results).
inline constexpr std::ptrdiff_t node_block_bytes = static_cast<std::ptrdiff_t>(sizeof(Node)) + 16;
inline constexpr std::ptrdiff_t walk_prefetch_distance = static_cast<std::ptrdiff_t>(walk_prefetch_nodes) * node_block_bytes;
/// The lines of a node that a walk reads (an address that is not a node is harmless).
inline void prefetch_node(const void* p) {
  __builtin_prefetch(p);
  __builtin_prefetch(static_cast<const std::byte*>(p) + 64);
}
/// Every line of a node: for a pass that reads shapes and attributes as well.
inline void prefetch_whole_node(const Node* n) {
  for (std::size_t b = 0; b < sizeof(Node); b += 64) __builtin_prefetch(reinterpret_cast<const std::byte*>(n) + b);
}

/// Appends to `order` every node below `root` not yet in `position` (a NodeIndex or NodeMarks),
/// producers first, records each one's place and calls `placed(node)`, while the node is still
/// in cache. Iterative: step graphs are deep.
template <class Index, class Placed = void (*)(const Node*)>
void append_topological(const Node* root, std::vector<const Node*>& order, Index& position,
                        Placed&& placed = [](const Node*) {}) {
  if (root == nullptr || position.contains(root)) return;
  thread_local std::vector<std::pair<const Node*, std::size_t>> stack;  // kept: deep graphs fault in pages
  stack.clear();
  stack.emplace_back(root, 0);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      const std::size_t k = next < node->walk_order.size() ? node->walk_order[next] : next;
      ++next;
      const Node* in = node->inputs[k].get();
      if (!position.contains(in)) {
        stack.emplace_back(in, 0);
        prefetch_node(reinterpret_cast<const std::byte*>(in) - walk_prefetch_distance);
      }
      continue;
    }
    if (stack.size() > walk_prefetch_nodes) prefetch_node(stack[stack.size() - 1 - walk_prefetch_nodes].first);
    if (position.emplace(node, static_cast<int>(order.size()))) {
      order.push_back(node);
      placed(node);
    }
    stack.pop_back();
  }
}

}  // namespace lt

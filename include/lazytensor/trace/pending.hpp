#pragma once
// Steps queued on a lazy device's worker, and the pending leaves that stand for their results
// meanwhile. A barrier rebinds each result tensor to a pending leaf at once and queues the
// step; the step writes the leaves' values when it has run. Graphs traced in the meantime use a
// pending leaf like any device_data leaf.
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/trace/node.hpp"

namespace lt {

namespace detail {
/// Failed steps that some leaf still refers to. While there are none (nearly always), no
/// graph can hold a leaf without a value, and graphs need no repair before they run.
inline std::atomic<int> failed_steps_alive{0};
}  // namespace detail

/// One queued step: the graphs of its results until it has run, then how it ended.
struct PendingStep {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;     // guarded by mu
  std::atomic<bool> ready{false};  // finished without error: a wait needs no lock
  std::exception_ptr error;  // guarded by mu: why the step failed
  // Set by the barrier before the step is queued. A step that succeeded drops them; a failed
  // one keeps them, so that a sound result can still be computed from its graph when read.
  std::vector<NodePtr> roots;
  std::vector<std::weak_ptr<DataNode>> leaves;  // leaves[k] gets roots[k]'s value; a dropped one is skipped

  PendingStep() = default;
  PendingStep(const PendingStep&) = delete;
  PendingStep& operator=(const PendingStep&) = delete;
  ~PendingStep() {
    if (error) detail::failed_steps_alive.fetch_sub(1, std::memory_order_relaxed);
  }

  /// Run by the worker: publishes the values (or the failure) and wakes whoever waits.
  void finish(std::vector<Array> values, std::exception_ptr failure) {
    std::vector<NodePtr> graphs;  // freed outside the lock
    const bool failed = failure != nullptr;
    {
      std::lock_guard lock(mu);
      if (failed) {
        error = std::move(failure);
        detail::failed_steps_alive.fetch_add(1, std::memory_order_relaxed);
      } else {
        for (std::size_t k = 0; k < leaves.size(); ++k)
          if (std::shared_ptr<DataNode> leaf = leaves[k].lock()) leaf->data = std::move(values[k]);
        graphs.swap(roots);
        leaves.clear();
      }
      finished = true;
    }
    if (!failed) ready.store(true, std::memory_order_release);
    cv.notify_all();
  }

  /// Blocks until the step has run; returns its error (null when it succeeded).
  std::exception_ptr wait() {
    if (ready.load(std::memory_order_acquire)) return nullptr;
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return finished; });
    return error;
  }
};

/// A device_data leaf of `meta` whose value `step` will write; hashed like any data of `meta`.
inline std::shared_ptr<DataNode> make_pending_leaf(const Meta& meta, std::shared_ptr<PendingStep> step) {
  const OpDesc& op = leaf::device_data;
  return std::allocate_shared<DataNode>(PoolAllocator<DataNode>{}, DataNode{{&op, data_node_hash(op, meta), 0, 0, {}, {}, meta, {}, 0, {}}, std::move(step), {}, {}});
}

/// Blocks until leaf `n` has its value (at once for data that is there); raises the error of
/// its step when that failed.
inline void await_value(const Node& n) {
  if (PendingStep* step = pending_step(n))
    if (std::exception_ptr e = step->wait()) std::rethrow_exception(e);
}

/// For a pending leaf: waits for its step, then returns the graph that was to compute the
/// leaf if the step failed, or null when the value is there.
inline NodePtr failed_original(const Node& leaf) {
  PendingStep& s = *leaf.leaf().step;
  if (!s.wait()) return nullptr;
  std::lock_guard lock(s.mu);
  for (std::size_t k = 0; k < s.leaves.size(); ++k)
    if (s.leaves[k].lock().get() == &leaf) return s.roots[k];
  fail("internal: a leaf of a failed step is missing from it");
}

/// `roots` with every leaf of a failed step replaced by the graph that was to compute it, so
/// that a sound value is computed from its graph and a bad one raises its error again. Nodes
/// above a replaced leaf are made anew; the rest are shared. Call it once the steps that may
/// have made the graphs' leaves have finished: it is a no-op while no failed step is alive.
inline std::vector<NodePtr> without_failed_leaves(std::span<const NodePtr> roots) {
  std::vector<NodePtr> out(roots.begin(), roots.end());
  if (detail::failed_steps_alive.load(std::memory_order_relaxed) == 0) return out;
  std::unordered_map<const Node*, NodePtr> done;  // node -> its repaired form
  struct Frame {
    NodePtr node;
    std::size_t next = 0;  // the next input to visit
  };
  for (NodePtr& root : out) {
    std::vector<Frame> stack{{root}};  // iterative: step graphs are deep
    while (!stack.empty()) {
      const Node* n = stack.back().node.get();
      if (done.contains(n)) {
        stack.pop_back();
        continue;
      }
      if (pending_step(*n) != nullptr) {
        NodePtr original = failed_original(*n);
        if (!original) {
          done.emplace(n, stack.back().node);
          stack.pop_back();
        } else if (auto it = done.find(original.get()); it != done.end()) {
          done.emplace(n, it->second);
          stack.pop_back();
        } else {
          stack.push_back({std::move(original)});
        }
        continue;
      }
      if (std::size_t k = stack.back().next++; k < n->inputs.size()) {
        if (!done.contains(n->inputs[k].get())) stack.push_back({n->inputs[k]});
        continue;
      }
      std::vector<NodePtr> inputs;
      bool changed = false;
      for (const NodePtr& in : n->inputs) {
        inputs.push_back(done.at(in.get()));
        changed |= inputs.back() != in;
      }
      done.emplace(n, changed ? make_node(*n->op, Attrs(n->attrs), std::move(inputs), n->meta, n->site)
                              : stack.back().node);
      stack.pop_back();
    }
    root = done.at(root.get());
  }
  return out;
}

}  // namespace lt

#pragma once
// Why a graph compiled: the cached graph nearest to it and the first node where they part.
// Worked out only when asked (LT_DEBUG=1, lt::debug::explain_compiles(true), or inside an
// lt::expect_cached scope), since it compares the graph with every cached plan.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>

#include "lazytensor/core/env.hpp"
#include "lazytensor/ops/registry.hpp"
#include "lazytensor/runtime/api.hpp"
#include "lazytensor/runtime/plan_cache.hpp"
#include "lazytensor/trace/debug.hpp"

namespace lt {

namespace detail {
inline bool debug_env() {
  static const bool on = env_flag("LT_DEBUG", false);
  return on;
}
inline std::atomic<bool> explain_requested{false};

inline bool explaining() {
  return debug_env() || explain_requested.load(std::memory_order_relaxed) || expect_cached_depth > 0;
}

struct LastReason {
  std::mutex mu;
  std::string text;
};
inline LastReason& last_reason() {
  static LastReason r;
  return r;
}

inline std::string_view op_name(OpId id) {
  const OpDesc* d = find_op(id);
  return d != nullptr ? d->name : id == OpId::fragment ? "fragment" : "unknown op";
}
inline std::string meta_text(const Meta& m) { return concat(name(m.dtype), m.shape); }
inline std::string positions_text(std::span<const int> ps) {
  std::string s;
  for (std::size_t k = 0; k < ps.size(); ++k) s += concat(k ? ", %" : "%", ps[k]);
  return s;
}

/// How graph `s` differs from `plan`'s graph at position `p` (from first_difference).
inline std::string difference_text(const Plan& plan, const Schedule& s, int p) {
  const auto at = static_cast<std::size_t>(p);
  if (at >= s.order.size() || at >= plan.nodes.size()) {
    if (s.order.size() != plan.nodes.size())
      return concat("the graph has ", s.order.size(), " nodes where it has ", plan.nodes.size());
    return concat("the graph's results are %", positions_text(s.roots), " where its are ", positions_text(plan.roots));
  }
  const Node& node = *s.order[at];
  const PlanNode& want = plan.nodes[at];
  std::string what = concat("%", p, " = ", node.op->name, " ", meta_text(node.meta), debug::detail::recorded_at(node));
  // Who reads it: an input's shape shows up first at the leaf, the op is what users wrote.
  for (std::size_t q = at + 1; q < s.order.size(); ++q)
    if (std::ranges::find(s.inputs[q], p) != s.inputs[q].end()) {
      what += concat(" (read by %", q, " = ", s.order[q]->op->name, debug::detail::recorded_at(*s.order[q]), ")");
      break;
    }
  if (node.op->id != want.op) return concat(what, ": the cached graph has ", op_name(want.op), " there");
  if (node.meta.shape != want.meta.shape) return concat(what, ": its shape was ", want.meta.shape);
  if (node.meta.dtype != want.meta.dtype) return concat(what, ": its dtype was ", name(want.meta.dtype));
  if (node.meta.wrapped_number != want.meta.wrapped_number) return concat(what, ": a C++ scalar in one graph only");
  if (!std::ranges::equal(s.inputs[at], plan.inputs[at]))
    return concat(what, ": it reads ", positions_text(s.inputs[at]), " where the cached graph reads ", positions_text(plan.inputs[at]));
  return concat(what, ": its attributes differ (another dim, size or option, or a scalar that is 0 or 1 in one graph only)");
}
}  // namespace detail

/// Why graph `s` is not in `cache`: the nearest cached graph (the one that matches it the
/// longest, in schedule order) and the first node where they differ.
inline std::string explain_compile(const Schedule& s, const PlanCache& cache) {
  std::shared_ptr<const Plan> nearest;
  int best = -1;
  for (const auto& plan : cache.plans()) {
    int p = first_difference(*plan, s);
    if (p < 0) p = static_cast<int>(s.order.size());  // same structure: only its key differs
    if (p > best) best = p, nearest = plan;
  }
  using detail::concat;
  std::string head = concat("compiling graph ", std::hex, s.key, std::dec, " (", s.order.size(), " nodes)");
  if (!nearest) return concat(head, ": nothing cached yet");
  if (nearest->key == s.key) return concat(head, ": a cached graph has its key but not its structure (hash collision): ",
                                           detail::difference_text(*nearest, s, best));
  return concat(head, ": nearest cached graph ", std::hex, nearest->key, std::dec, " differs at ",
                detail::difference_text(*nearest, s, best));
}

namespace detail {
/// Notes (and with LT_DEBUG=1 prints) why `s` compiles.
inline std::string note_compile_reason(const Schedule& s, const PlanCache& cache) {
  std::string why = explain_compile(s, cache);
  if (debug_env()) std::fprintf(stderr, "lazytensor: %s\n", why.c_str());
  auto& r = last_reason();
  std::lock_guard lock(r.mu);
  r.text = why;
  return why;
}
}  // namespace detail

}  // namespace lt

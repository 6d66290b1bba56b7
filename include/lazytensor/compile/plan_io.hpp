#pragma once
// A Plan as bytes, and back. Plans are data (positions, shapes, op ids), so a plan read from
// disk runs like one just compiled: kernels come from the live graph's nodes. The reader
// trusts nothing, its checksum included: every count, offset, index and size is checked
// before use (offsets all before any list is walked, sizes with overflow checks), then the
// plan as a whole (plan_check.hpp); a bad one raises lt::Error, never reads out of bounds.
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "lazytensor/compile/plan.hpp"
#include "lazytensor/compile/plan_check.hpp"
#include "lazytensor/core/checked_size.hpp"
#include "lazytensor/ops/registry.hpp"

namespace lt {

namespace detail {

class PlanWriter {
 public:
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void put(T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof v);
  }
  /// A list: its length, then its values (a vector, a span or a SmallVector).
  template <class List> void put_all(const List& v) {
    put(static_cast<std::uint64_t>(v.size()));
    for (const auto& x : v) put(x);
  }
  void put_shape(const Shape& s) {
    put(static_cast<std::uint8_t>(s.rank()));
    for (std::int64_t d : s) put(d);
  }
  void put_meta(const Meta& m) {
    put_shape(m.shape);
    put(static_cast<std::uint8_t>(m.dtype));
    put(static_cast<std::uint8_t>(m.wrapped_number));
  }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

class PlanReader {
 public:
  explicit PlanReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  template <class T>
    requires std::is_trivially_copyable_v<T>
  T get() {
    LT_CHECK(bytes_.size() - at_ >= sizeof(T), "plan: truncated at byte ", at_);
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  /// A count of items of `item_bytes` each that the bytes left can hold.
  std::size_t count(std::size_t item_bytes) {
    auto n = get<std::uint64_t>();
    LT_CHECK(n <= (bytes_.size() - at_) / std::max<std::size_t>(item_bytes, 1), "plan: a count of ", n,
             " overruns the data at byte ", at_);
    return static_cast<std::size_t>(n);
  }
  template <class T> std::vector<T> get_all() {
    std::vector<T> v(count(sizeof(T)));
    for (T& x : v) x = get<T>();
    return v;
  }
  Shape get_shape() {
    auto rank = get<std::uint8_t>();
    LT_CHECK(rank <= max_rank, "plan: rank ", int(rank), " is out of range");
    Shape s = Shape::filled(rank, 0);
    for (int d = 0; d < rank; ++d) s[d] = get<std::int64_t>();
    checked_numel(s, "plan: a shape");
    return s;
  }
  Meta get_meta() {
    Meta m;
    m.shape = get_shape();
    auto t = get<std::uint8_t>();
    LT_CHECK(is_dtype(static_cast<DType>(t)), "plan: dtype ", int(t), " is out of range");
    m.dtype = static_cast<DType>(t);
    m.wrapped_number = get<std::uint8_t>() != 0;
    return m;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
};

inline void check_position(std::int64_t p, std::size_t n, const char* what) {
  LT_CHECK(p >= 0 && static_cast<std::size_t>(p) < n, "plan: ", what, " ", p, " is out of range");
}

}  // namespace detail

/// The plan as bytes (the reader below takes them back).
inline std::vector<std::byte> serialize_plan(const Plan& plan) {
  detail::PlanWriter w;
  w.put(plan.key);
  w.put(static_cast<std::uint64_t>(plan.nodes.size()));
  for (std::size_t p = 0; p < plan.nodes.size(); ++p) {
    w.put(static_cast<std::uint16_t>(plan.nodes[p].op));
    w.put_meta(plan.nodes[p].meta);
    w.put_all(plan.words[p]);
  }
  w.put_all(plan.inputs.offsets);
  w.put_all(plan.inputs.flat);
  w.put_all(plan.roots);
  w.put(static_cast<std::uint64_t>(plan.steps.size()));
  for (const PlanStep& s : plan.steps) w.put(s.position), w.put(s.group);
  w.put(static_cast<std::uint64_t>(plan.groups.size()));
  for (const FusionGroup& g : plan.groups) {
    w.put(static_cast<std::uint8_t>(g.kind));
    w.put_shape(g.shape);
    w.put(g.row);
    w.put(g.reduced_from);
    w.put(static_cast<std::uint64_t>(g.members.size()));
    for (const GroupMember& m : g.members) {
      w.put(m.position);
      w.put(static_cast<std::uint8_t>(m.role));
      w.put_all(m.inputs);
    }
    w.put(static_cast<std::uint64_t>(g.externals.size()));
    for (const GroupExternal& e : g.externals) {
      w.put(e.position);
      w.put_shape(e.index_space);
    }
  }
  w.put_all(plan.materialized);
  w.put_all(plan.arena_offset);
  const PlanStats& st = plan.stats;
  for (int v : {st.kernels, st.views, st.fused_groups, st.fused_ops, st.row_groups, st.gemm_epilogues}) w.put(v);
  w.put(st.intermediate_bytes);
  w.put(st.arena_bytes);
  return w.take();
}

/// The plan in `bytes`, checked to be whole and consistent: every position, group and member
/// index in range, every arena placement inside the arena. Raises lt::Error otherwise.
inline Plan deserialize_plan(std::span<const std::byte> bytes) {
  using detail::check_position;
  detail::PlanReader r(bytes);
  Plan plan;
  plan.key = r.get<hash_t>();
  LT_CHECK(bytes.size() < static_cast<std::size_t>(std::numeric_limits<int>::max()), "plan: ", bytes.size(),
           " bytes is too large");  // positions and list offsets are ints
  const std::size_t n = r.count(13);  // op, rank, dtype, flag, word count
  plan.nodes.resize(n);
  for (PlanNode& node : plan.nodes) {
    auto op = r.get<std::uint16_t>();
    LT_CHECK(op < op_id_limit, "plan: op id ", op, " is out of range");
    node.op = static_cast<OpId>(op);
    node.meta = r.get_meta();
    plan.value_elements = checked_add(plan.value_elements, node.meta.shape.numel(), "plan: the step's elements");
    std::vector<std::int64_t> words = r.get_all<std::int64_t>();
    plan.words.flat.insert(plan.words.flat.end(), words.begin(), words.end());
    plan.words.close_list();
  }
  plan.inputs.offsets = r.get_all<int>();
  plan.inputs.flat = r.get_all<int>();
  const auto& offsets = plan.inputs.offsets;
  LT_CHECK(offsets.size() == n + 1 && offsets[0] == 0 && static_cast<std::size_t>(offsets[n]) == plan.inputs.flat.size(),
           "plan: malformed edges");
  // Every offset first: a list is walked only once all of them are known to lie in order.
  for (std::size_t p = 0; p < n; ++p) LT_CHECK(offsets[p] <= offsets[p + 1], "plan: malformed edges");
  for (std::size_t p = 0; p < n; ++p)
    for (int q : plan.inputs[p]) LT_CHECK(q >= 0 && static_cast<std::size_t>(q) < p, "plan: node ", p, " reads a later node");
  plan.roots = r.get_all<int>();
  for (int root : plan.roots) check_position(root, n, "root");
  std::vector<PlanStep> steps(r.count(8));  // checked once the groups are known
  for (PlanStep& s : steps) s.position = r.get<int>(), s.group = r.get<int>();
  plan.groups.resize(r.count(30));  // kind, shape rank, row, first reduced dim, two counts
  for (FusionGroup& g : plan.groups) {
    const auto kind = r.get<std::uint8_t>();
    LT_CHECK(kind < group_kinds.size(), "plan: group kind ", int(kind), " is out of range");
    g.kind = static_cast<GroupKind>(kind);
    g.shape = r.get_shape();
    g.row = r.get<std::int64_t>();
    g.reduced_from = r.get<int>();
    LT_CHECK(g.row >= 1 && g.reduced_from >= -1 && g.reduced_from <= g.shape.rank(), "plan: a malformed group");
    g.members.resize(r.count(13));  // position, role, input count
    for (GroupMember& m : g.members) {
      m.position = r.get<int>();
      check_position(m.position, n, "group member");
      auto role = r.get<std::uint8_t>();
      LT_CHECK(role <= static_cast<std::uint8_t>(MemberRole::source), "plan: member role ", int(role), " is out of range");
      m.role = static_cast<MemberRole>(role);
      m.inputs = r.get_all<int>();
    }
    g.externals.resize(r.count(5));
    for (GroupExternal& e : g.externals) {
      e.position = r.get<int>();
      check_position(e.position, n, "group input");
      e.index_space = r.get_shape();
    }
    for (std::size_t i = 0; i < g.members.size(); ++i)
      for (int k : g.members[i].inputs)
        LT_CHECK(k < 0 ? static_cast<std::size_t>(-1 - static_cast<std::int64_t>(k)) < g.externals.size()
                       : static_cast<std::size_t>(k) < i,
                 "plan: a group member reads past its group");
  }
  for (const PlanStep& s : steps) {
    check_position(s.position, n, "step");
    LT_CHECK(s.group >= -1 && s.group < static_cast<int>(plan.groups.size()), "plan: step group ", s.group, " is out of range");
  }
  plan.steps = std::move(steps);
  plan.materialized = r.get_all<char>();
  plan.arena_offset = r.get_all<std::int64_t>();
  LT_CHECK(plan.materialized.size() == n && plan.arena_offset.size() == n, "plan: per-node tables of the wrong size");
  PlanStats& st = plan.stats;
  for (int* v : {&st.kernels, &st.views, &st.fused_groups, &st.fused_ops, &st.row_groups, &st.gemm_epilogues}) *v = r.get<int>();
  st.intermediate_bytes = r.get<std::int64_t>();
  st.arena_bytes = r.get<std::int64_t>();
  LT_CHECK(st.arena_bytes >= 0 && st.intermediate_bytes >= 0, "plan: a negative size");
  for (int v : {st.kernels, st.views, st.fused_groups, st.fused_ops, st.row_groups, st.gemm_epilogues})
    LT_CHECK(v >= 0, "plan: a negative count");
  LT_CHECK(r.done(), "plan: trailing bytes");
  check_plan(plan);
  return plan;
}

}  // namespace lt

#pragma once
// RowLoop's binding: each member's kernel bound to its operands, scratch reserved, tiles shared
// and prefetches split, once per loop (bind) or per run of the same plan (rebind).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lazytensor/compile/plan_types.hpp"
#include "lazytensor/compile/schedule.hpp"
#include "lazytensor/core/array.hpp"
#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/shape.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/ops/kernels/convert.hpp"
#include "lazytensor/ops/kernels/elementwise.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/ops/reduction.hpp"
#include "lazytensor/runtime/row_loop_class.hpp"
#include "lazytensor/trace/node.hpp"

namespace lt::detail {

inline void RowLoop::bind() {
  const std::int64_t row = g_.row;
  // A map over bf16 values alone takes tiles of as many bytes as an f32 map (row_loop_class.hpp).
  const bool bf16_map = g_.kind == GroupKind::map && moves_only_bf16();
  const std::int64_t tile = kind_info(g_.kind).tile_elements * (bf16_map ? 2 : 1);
  tile_rows_ = std::max<std::int64_t>(1, std::min(tile / row, g_.rows()));
  // What only the leader reads, it reads whole: no tile reads it.
  const bool led = g_.members[0].role == MemberRole::source;
  if (led) bind_source();
  std::vector<char> tile_read(g_.externals.size(), 0);
  for (std::size_t i = led ? 1 : 0; i < g_.members.size(); ++i)
    for (int k : g_.members[i].inputs)
      if (k < 0) tile_read[idx(-1 - k)] = 1;
  for (std::size_t k = 0; k < g_.externals.size(); ++k) {
    External x = external(k);
    x.whole = !tile_read[k];
    column_reads_ = column_reads_ || (x.column && !x.whole);
    if (!x.whole && !x.one && !x.direct && !x.column) {
      x.scratch = reserve(tile_rows_ * x.per, x.operand.dtype);
      gathered_.push_back(k);
    }
    externals_.push_back(x);
  }
  members_.resize(g_.members.size());
  std::size_t input_count = 0;
  for (const GroupMember& gm : g_.members) input_count += gm.inputs.size();
  inputs_.reserve(input_count);
  for (std::size_t i = 0; i < g_.members.size(); ++i) {
    const std::size_t first_input = inputs_.size();
    if (bind_member(i)) continue;
    inputs_.resize(first_input);
    bind_on_views(i);
  }
  for (std::size_t i = 0; i < g_.members.size(); ++i) member_runs_.add(*node(static_cast<int>(i)).op);
  fuse_bf16_ops();
  fold_round_trips();
  // A value is read by its readers and by those of the members that are its values.
  last_reader_.assign(members_.size(), -1);
  for (std::size_t i = 0; i < members_.size(); ++i)
    if (!members_[i].absorbed)
      for (const Input& in : inputs_of(members_[i]))
      if (in.member >= 0) last_reader_[idx(source_of(in.member))] = static_cast<std::ptrdiff_t>(i);
  share_tiles();
  for (std::size_t i = 0; i < members_.size(); ++i) {
    Member& m = members_[i];
    m.stream_direct = m.streamed && m.one_call && !read_after(static_cast<int>(i), i);
  }
  if (g_.kind == GroupKind::map && !bf16_map) share_prefetches();
  list_run_work();
}

inline bool RowLoop::moves_only_bf16() const {
  bool bf16 = false;
  auto narrow = [&](DType t) {
    bf16 = bf16 || t == DType::bf16;
    return itemsize(t) <= 2;
  };
  for (const GroupExternal& e : g_.externals)
    if (!narrow(value(e.position).view.dtype)) return false;
  for (const GroupMember& gm : g_.members)
    if (plan_.materialized[idx(gm.position)] && !narrow(s_->order[idx(gm.position)]->meta.dtype)) return false;
  return bf16;
}

inline bool RowLoop::rebind(const Schedule& s, std::vector<Array>& values) {
  s_ = &s;
  values_ = &values;
  for (std::size_t k = 0; k < externals_.size(); ++k) {
    External& kept = externals_[k];
    if (kept.whole) continue;
    External x = external(k);
    if (x.one != kept.one || x.direct != kept.direct || x.column != kept.column) return false;
    kept.operand = x.operand;
  }
  for (std::size_t i = 0; i < members_.size(); ++i) {
    Member& m = members_[i];
    const Node& n = node(static_cast<int>(i));
    // A cast's attributes are structure: nothing to bind again. A narrowing that runs a bf16
    // op takes the op's kernel when the op is bound again. The product reads its node's
    // attributes as it runs.
    if (m.source || m.kernel.converts || m.same_as >= 0 || m.fused_op >= 0) continue;
    if (m.on_views) {
      if (!m.reduction) m.attrs = &n.attrs;
      else if (!m.bound_attrs.same_as(n)) m.row_attrs = reduction::attrs_over_rows(n.attrs), m.bound_attrs = KeptAttrs(n);
      continue;
    }
    if (m.constant) {
      if (!m.bound_attrs.same_as(n)) bind_constant(m, n);
      continue;
    }
    if (!m.reduction) m.attrs = &n.attrs;
    if (m.bound_attrs.same_as(n)) continue;
    const BoundKernel was = m.kernel;
    if (!bind_kernel(i, operand_metas(i)) || m.kernel.input != was.input || (m.kernel.map == nullptr) != (was.map == nullptr) ||
        (m.kernel.map_uniform_last == nullptr) != (was.map_uniform_last == nullptr) ||
        (m.kernel.reduce == nullptr) != (was.reduce == nullptr))
      return false;
    for (std::size_t j = i + 1; j < members_.size(); ++j)
      if (members_[j].fused_op == static_cast<int>(i) && !adopt_bf16_op(members_[j], m)) return false;
  }
  return true;
}

inline RowLoop::External RowLoop::external(std::size_t k) const {
  const GroupExternal& e = g_.externals[k];
  const View& v = value(e.position).view;
  const std::int64_t per = e.index_space == g_.shape ? g_.row : 1;
  External x{kernels::Operand(v, e.index_space), per, v.numel() == 1, false, 0};
  x.direct = !x.one && x.operand.dense && v.shape == e.index_space;
  x.column = g_.kind == GroupKind::product && !x.one && !x.direct && e.index_space == g_.shape && column_operand(x.operand);
  return x;
}

inline void RowLoop::bind_constant(Member& m, const Node& n) {
  at_running_level(*n.op).kernel({}, View{m.constant_value, n.meta.dtype, Shape{}, Strides{}, n.meta.wrapped_number}, n.attrs);
  m.bound_attrs = KeptAttrs(n);
}

inline std::span<const Meta> RowLoop::operand_metas(std::size_t i) const {
  thread_local std::vector<Meta> metas;
  metas.clear();
  static const Shape tile_shape{1, 1}, zero_dim{};
  auto add_meta = [&](const Shape& shape, DType dtype, bool wrapped_number) {
    Meta& meta = metas.emplace_back();
    meta.shape = shape;
    meta.dtype = dtype;
    meta.wrapped_number = wrapped_number;
  };
  for (int k : g_.members[i].inputs) {
    if (k >= 0) {
      const Node& q = node(k);
      if (members_[idx(k)].constant) metas.push_back(q.meta);
      else add_meta(tile_shape, q.meta.dtype, false);
    } else {
      const View& v = value(g_.externals[idx(-1 - k)].position).view;
      add_meta(externals_[idx(-1 - k)].one && v.shape.rank() == 0 ? zero_dim : tile_shape, v.dtype, v.wrapped_number);
    }
  }
  return metas;
}

inline bool RowLoop::bind_kernel(std::size_t i, std::span<const Meta> metas) {
  Member& m = members_[i];
  const Node& n = node(static_cast<int>(i));
  Meta out;
  out.shape = Shape{1, 1};
  out.dtype = n.meta.dtype;
  if (m.reduction) m.row_attrs = reduction::attrs_over_rows(n.attrs);
  m.attrs = m.reduction ? &m.row_attrs : &n.attrs;
  m.bound_attrs = KeptAttrs(n);
  return at_running_level(*n.op).bind(metas, out, *m.attrs, m.kernel);
}

inline void RowLoop::add_inputs(std::size_t i) {
  const GroupMember& gm = g_.members[i];
  Member& m = members_[i];
  m.per = gm.role == MemberRole::full ? g_.row : 1;
  m.out_dtype = node(static_cast<int>(i)).meta.dtype;
  m.reduction = node(static_cast<int>(i)).op->kind == OpKind::reduction;
  m.first_input = inputs_.size();
  m.input_count = gm.inputs.size();
  for (int k : gm.inputs) {
    Input in;
    if (k >= 0) {
      const Member& src = members_[idx(k)];
      in.member = k;
      in.per = src.constant ? 0 : src.per;
    } else {
      const External& e = externals_[idx(-1 - k)];
      in.external = -1 - k;
      in.per = e.one ? 0 : e.per;
    }
    inputs_.push_back(in);
  }
}

inline bool RowLoop::bind_member(std::size_t i) {
  const GroupMember& gm = g_.members[i];
  const Node& n = node(static_cast<int>(i));
  Member& m = members_[i];
  if (gm.role == MemberRole::constant) {
    // A constant is made from attributes alone (grouping.hpp's inline_constant): no inputs,
    // one value of at most 8 bytes.
    m.constant = true;
    bind_constant(m, n);
    return true;
  }
  if (gm.role == MemberRole::source) {
    m.source = true;
    m.per = g_.row;
    m.out_dtype = n.meta.dtype;
    m.materialized = plan_.materialized[idx(gm.position)];
    return true;
  }
  if (at_running_level(*n.op).bind == nullptr || gm.inputs.size() > max_inputs || members_on_views) return false;
  add_inputs(i);
  const std::span<const Meta> metas = operand_metas(i);
  if (!bind_kernel(i, metas)) return false;
  for (std::size_t k = 0; k < m.input_count; ++k) {
    Input& in = inputs_of(m)[k];
    if (in.per != 0 && metas[k].dtype != m.kernel.input) {
      // Converted a tile at a time, as the op's kernel converts its operands (where's bool
      // condition, a sum of bools).
      in.from = metas[k].dtype;
      in.converted_at = static_cast<std::ptrdiff_t>(reserve(tile_rows_ * in.per, m.kernel.input));
    }
    if (m.reduction ? in.per != g_.row : in.per != m.per && in.per != 0 && in.per != 1) return false;
    if (in.per == 0) {
      in.fixed_at = static_cast<std::ptrdiff_t>(fixed_.size());
      fixed_.resize(fixed_.size() + static_cast<std::size_t>(std::min(kernels::chunk_size, tile_rows_ * m.per)) * sizeof(double));
      m.fixed_inputs = true;
    } else if (in.per != m.per) {
      in.filled_at = static_cast<std::ptrdiff_t>(reserve(std::max(kernels::chunk_size, spread_rows() * g_.row), m.kernel.input));
      m.per_row_inputs = true;
    }
  }
  if (m.reduction ? m.kernel.reduce == nullptr || m.per != 1 : m.kernel.map == nullptr) return false;
  if (!m.reduction && m.input_count > 0 && m.kernel.map_uniform_last != nullptr) {
    const Input& last = inputs_of(m).back();
    m.uniform_last = last.fixed_at >= 0 || last.filled_at >= 0;
  }
  m.one_call = !m.reduction && !m.per_row_inputs && (!m.fixed_inputs || tile_rows_ * m.per <= kernels::chunk_size) &&
               std::none_of(inputs_of(m).begin(), inputs_of(m).end(), [](const Input& in) { return in.converted_at >= 0; });
  m.materialized = plan_.materialized[idx(gm.position)];
  // A result far larger than the caches is streamed past them, so that its lines need not be
  // read from memory before being written: stored from the member's packets where it takes
  // one call and no later member reads it (stream_direct), else made in scratch and copied.
  const std::int64_t bytes = n.meta.shape.numel() * static_cast<std::int64_t>(itemsize(n.meta.dtype));
  m.streamed = m.materialized && gm.role == MemberRole::full && bytes >= kernels::streaming_store_bytes;
  if (!m.materialized || m.streamed) m.scratch = reserve(tile_rows_ * m.per, n.meta.dtype);
  return true;
}

inline void RowLoop::bind_on_views(std::size_t i) {
  const Node& n = node(static_cast<int>(i));
  Member& m = members_[i];
  m = Member{};
  add_inputs(i);
  m.on_views = at_running_level(*n.op).kernel;
  if (m.reduction) m.row_attrs = reduction::attrs_over_rows(n.attrs);
  m.attrs = m.reduction ? &m.row_attrs : &n.attrs;
  m.bound_attrs = KeptAttrs(n);
  m.materialized = plan_.materialized[idx(g_.members[i].position)];
  if (!m.materialized) m.scratch = reserve(tile_rows_ * m.per, n.meta.dtype);
  ++on_views_;
}

inline void RowLoop::fold_round_trips() {
  for (std::size_t i = 0; i < members_.size(); ++i) {
    Member& m = members_[i];
    if (!m.kernel.converts || m.constant || m.materialized || m.per == 0 || m.kernel.input != DType::f32 ||
        m.out_dtype != DType::bf16)
      continue;
    bool read = false, only_widened = true;  // read, and only by widenings that are not results
    for (std::size_t j = i + 1; j < members_.size(); ++j) {
      const Member& r = members_[j];
      for (const Input& in : inputs_of(r)) {
        if (in.member != static_cast<int>(i)) continue;
        read = true;
        only_widened = only_widened && r.kernel.converts && !r.materialized && r.out_dtype == DType::f32 && r.input_count == 1;
      }
    }
    if (!read || !only_widened) continue;
    m.kernel.map = &kernels::bf16_round_trip_map;
    m.out_dtype = DType::f32;
    m.scratch = reserve(tile_rows_ * m.per, DType::f32);
    for (std::size_t j = i + 1; j < members_.size(); ++j)
      if (members_[j].input_count == 1 && inputs_of(members_[j])[0].member == static_cast<int>(i))
        members_[j].same_as = static_cast<int>(i);
  }
}

inline void RowLoop::share_tiles() {
  // Whether member i, reading member k, may share k's place: k's value is only passed on,
  // is as wide as i's, and is read by no member after i.
  auto shares = [&](int k, std::size_t i) {
    const Member &value = members_[idx(k)], &m = members_[i];
    return !value.materialized && !value.constant && !value.reduction && !value.source && !value.on_views &&
           value.per == m.per && itemsize(value.out_dtype) == itemsize(m.out_dtype) && !read_after(k, i);
  };
  for (std::size_t i = 0; i < members_.size(); ++i) {
    Member& m = members_[i];
    // A kernel run on views may not read and write one place.
    if (m.reduction || m.constant || m.source || m.on_views || m.absorbed || m.same_as >= 0 || (m.materialized && m.streamed))
      continue;
    for (const Input& in : inputs_of(m)) {
      if (in.member < 0) continue;
      const int k = source_of(in.member);
      if (!shares(k, i)) continue;
      Member& value = members_[idx(k)];
      if (!m.materialized) {
        // A chain: made where its first value is, named directly, so that placing a chain of
        // 100 values (W5) is not 100 walks back along it.
        m.made_in = value.made_in >= 0 ? value.made_in : k;
        break;
      }
      if (value.made_in >= 0) continue;  // made in a chain's tile already
      value.made_in = static_cast<int>(i);
      break;
    }
  }
}

inline void RowLoop::share_prefetches() {
  const auto shares = static_cast<std::int64_t>(members_.size());
  for (std::int64_t share = 0; share < shares; ++share) {
    prefetch_from_.push_back(prefetches_.size());
    for (const External& e : externals_) {
      if (!e.direct) continue;
      const std::int64_t row_bytes = e.row_bytes();
      const std::int64_t lines = (tile_rows_ * row_bytes + 63) / 64;
      const std::int64_t first = lines * share / shares, last = lines * (share + 1) / shares;
      if (first < last) prefetches_.push_back(Prefetch{static_cast<std::size_t>(&e - externals_.data()), row_bytes, 64 * first, 64 * last});
    }
  }
  prefetch_from_.push_back(prefetches_.size());
}

}  // namespace lt::detail

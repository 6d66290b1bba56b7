#pragma once
// RowLoop's run: a bound group's values placed, then its tiles run in parallel, member by member.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "lazytensor/core/array.hpp"
#include "lazytensor/core/buffer.hpp"
#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/kernels/elementwise.hpp"
#include "lazytensor/ops/kernels/packet.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/runtime/fault_site.hpp"
#include "lazytensor/runtime/row_loop_class.hpp"
#include "lazytensor/runtime/value_runs.hpp"

namespace lt::detail {

inline void RowLoop::run(const Buffer& arena) {
  member_runs_.report();
  static metrics::Counter& bf16_ops = metrics::counter_handle("RowLoopBf16Ops");
  if (bf16_ops_ > 0) bf16_ops.add(bf16_ops_);
  for (std::size_t i : materialized_) (*values_)[idx(g_.members[i].position)] = output_array(plan_, arena, g_.members[i].position);
  if (!placed_) {
    place_values();
    placed_ = true;
  } else {
    // Scratch places and fixed runs stay where bind put them: only results and externals move.
    for (std::size_t k : moving_members_) place_member(k);
    for (std::size_t j : moving_inputs_) place_input(inputs_[j]);
  }
  for (const auto& [i, j] : fixed_reads_) {
    const Input& in = inputs_[j];
    const Member& m = members_[i];
    // A fixed value (a constant or a one-element external) as the reader's compute dtype.
    const std::byte* fixed = in.member >= 0 ? members_[idx(in.member)].constant_value
                                            : value(g_.externals[idx(in.external)].position).view.data;
    DType from = in.member >= 0 ? node(in.member).meta.dtype : externals_[idx(in.external)].operand.dtype;
    alignas(8) std::byte converted[8];
    convert_values(from, fixed, m.kernel.input, converted, 1);
    fill_values(fixed_.data() + in.fixed_at, converted, itemsize(m.kernel.input), std::min(kernels::chunk_size, tile_rows_ * m.per));
  }
  if (members_[0].source) return run_source();
  const std::int64_t block_rows = std::max(tile_rows_, row_loop_block_elements / g_.row);
  auto run_block = [&](std::int64_t b0, std::int64_t b1) {
    const TileBase base{thread_scratch()};
    for (std::int64_t r0 = b0; r0 < b1; r0 += tile_rows_) run_tile(r0, std::min(b1, r0 + tile_rows_), base);
    kernels::pk::stream_fence();
  };
  if (!runs_on_views()) return kernels::parallel_blocks(g_.rows(), block_rows, run_block);
  // Isolated: a member kernel that runs in parallel itself must not let this thread pick up
  // another block of this loop while it waits, which would reuse the scratch.
  kernels::parallel_blocks(g_.rows(), block_rows, [&](std::int64_t b0, std::int64_t b1) {
    tbb::this_task_arena::isolate([&] { run_block(b0, b1); });
  });
}

inline std::byte* RowLoop::thread_scratch() const {
  thread_local std::vector<std::byte> scratch;  // per thread and reused: no allocation once a thread has run a tile
  if (scratch.size() < scratch_bytes_ + 64) scratch.resize(scratch_bytes_ + 64);
  return scratch.data() + ((64 - reinterpret_cast<std::uintptr_t>(scratch.data()) % 64) % 64);
}

inline RowLoop::Place RowLoop::member_place(std::size_t k) const {
  if (members_[k].same_as >= 0) return member_place(idx(members_[k].same_as));
  if (members_[k].made_in >= 0) return member_place(idx(members_[k].made_in));
  const Member& m = members_[k];
  if (m.source) return Place{nullptr, 0, Place::from_source};
  if (!m.materialized || m.streamed) return Place{nullptr, 0, static_cast<std::ptrdiff_t>(m.scratch)};
  return result_place(k);
}

inline RowLoop::Place RowLoop::result_place(std::size_t k) const {
  const View& v = value(g_.members[k].position).view;
  return Place{v.data, members_[k].per * static_cast<std::int64_t>(itemsize(v.dtype))};
}

inline void RowLoop::place_values() {
  for (std::size_t i = 0; i < members_.size(); ++i)
    if (!members_[i].constant) place_member(i);
  for (Member& m : members_)
    for (Input& in : inputs_of(m)) place_input(in);
}

inline void RowLoop::place_member(std::size_t k) {
  Member& m = members_[k];
  m.out = member_place(k);
  if (m.streamed) m.streamed_to = result_place(k);
}

inline void RowLoop::place_input(Input& in) {
  if (in.fixed_at >= 0) {
    in.place = Place{fixed_.data() + in.fixed_at};
  } else if (in.member >= 0) {
    in.place = members_[idx(in.member)].out;
  } else {
    const External& e = externals_[idx(in.external)];
    if (e.column) in.place = Place{e.operand.data, e.row_bytes(), -1, geometry_.m};
    else if (e.direct) in.place = Place{e.operand.data, e.row_bytes()};
    else in.place = Place{nullptr, 0, static_cast<std::ptrdiff_t>(e.scratch)};
  }
}

inline bool RowLoop::made_in_result(std::size_t k) const {
  // As member_place resolves it.
  const Member& m = members_[k];
  if (m.same_as >= 0) return made_in_result(idx(m.same_as));
  if (m.made_in >= 0) return made_in_result(idx(m.made_in));
  return m.materialized && !m.streamed && !m.source;
}

inline void RowLoop::list_run_work() {
  std::vector<bool> moves(members_.size(), false);
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    if (m.materialized) materialized_.push_back(i);
    if (m.constant) continue;
    if (m.same_as < 0 && !m.absorbed && !m.source) running_.push_back(i);
    moves[i] = made_in_result(i) || m.streamed;
    if (moves[i]) moving_members_.push_back(i);
  }
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    for (std::size_t j = m.first_input; j < m.first_input + m.input_count; ++j) {
      const Input& in = inputs_[j];
      if (in.fixed_at >= 0) {
        if (!m.constant) fixed_reads_.emplace_back(i, j);
      } else if (in.member < 0 || moves[idx(in.member)] || members_[idx(in.member)].constant) {
        moving_inputs_.push_back(j);
      }
    }
  }
}

[[gnu::always_inline]] inline void RowLoop::prefetch_share(std::int64_t r, std::size_t i) const {
  for (std::size_t p = prefetch_from_[i]; p < prefetch_from_[i + 1]; ++p) {
    const Prefetch& f = prefetches_[p];
    const std::byte* next = externals_[f.external].operand.data + r * f.row_bytes;
    for (std::int64_t at = f.first; at < f.last; at += 64) __builtin_prefetch(next + at, 0, 3);
  }
}

[[gnu::always_inline]] inline void RowLoop::run_in_tile(std::size_t i, std::int64_t rows, std::int64_t r0, const TileBase& base) const {
  const Member& m = members_[i];
  std::byte* out = m.out.in_tile(r0, base);
  const std::span<const Input> ins = inputs_of(m);
  if (m.one_call) {
    const void* src[max_inputs];
    for (std::size_t k = 0; k < ins.size(); ++k) src[k] = ins[k].place.in_tile(r0, base);
    const auto map = m.uniform_last ? m.kernel.map_uniform_last : m.kernel.map;
    if (m.stream_direct) {
      map(m.kernel.state, src, m.streamed_to.in_tile(r0, base), rows * m.per, true);
      return;
    }
    map(m.kernel.state, src, out, rows * m.per, false);
  } else {
    run_member(m, rows, r0, out, base);
  }
  if (m.streamed) kernels::pk::stream_copy(m.streamed_to.in_tile(r0, base), out, static_cast<std::size_t>(m.streamed_to.row_bytes * rows));
}

inline void RowLoop::run_tile(std::int64_t r0, std::int64_t r1, const TileBase& base) const {
  const std::int64_t rows = r1 - r0;
  // A short tile of the externals read in place, map_loop_prefetch_tiles ahead, is fetched
  // while this one runs, a share before each member: the hardware prefetchers alone, or the
  // whole tile fetched at once, keep fewer streams in flight. A long tile is left to them:
  // fetching one ahead in a burst stalls on full miss buffers (benchmarks/README.md).
  const std::int64_t ahead = r1 + (map_loop_prefetch_tiles - 1) * tile_rows_;
  const bool prefetch = !prefetches_.empty() && ahead + tile_rows_ <= g_.rows();
  for (std::size_t k : gathered_) {
    const External& e = externals_[k];
    visit_storage(e.operand.dtype, [&]<class T>(Tag<T>) {
      kernels::load_chunk<T>(e.operand, g_.externals[k].index_space, r0 * e.per, r1 * e.per,
                             reinterpret_cast<T*>(base.scratch + e.scratch));
    });
  }
  std::size_t i = 0;  // the member running: a fault names the line that recorded it
  try {
    if (!prefetch) {
      for (std::size_t k : running_) run_in_tile(i = k, rows, r0, base);
      return;
    }
    for (; i < members_.size(); ++i) {
      const Member& m = members_[i];
      prefetch_share(ahead, i);
      if (m.constant || m.source || m.same_as >= 0 || m.absorbed) continue;
      run_in_tile(i, rows, r0, base);
    }
  } catch (const Error&) {
    raise_recorded_at(node(static_cast<int>(i)));
  }
}

inline void RowLoop::run_member(const Member& m, std::int64_t rows, std::int64_t r0, std::byte* out,
                                const TileBase& base) const {
  if (m.on_views != nullptr) return run_on_views(m, rows, r0, out, base);
  const std::int64_t row = g_.row;
  const std::span<const Input> ins = inputs_of(m);
  const std::size_t out_size = itemsize(m.out_dtype), in_size = itemsize(m.kernel.input);
  const std::byte* at[max_inputs];
  for (std::size_t k = 0; k < ins.size(); ++k) {
    const Input& in = ins[k];
    at[k] = in.place.in_tile(r0, base);
    if (in.converted_at >= 0) {
      convert_values(in.from, at[k], m.kernel.input, base.scratch + in.converted_at, rows * in.per);
      at[k] = base.scratch + in.converted_at;
    }
  }
  if (!m.reduction) return run_map(m, rows, at, out, out_size, in_size, base.scratch);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::byte* dst = out + r * static_cast<std::int64_t>(out_size);
    const std::byte* row_values = at[0] + r * row * static_cast<std::int64_t>(in_size);
    if (m.kernel.result == m.out_dtype) {
      m.kernel.reduce(row_values, row, *m.attrs, dst);
      continue;
    }
    alignas(8) std::byte result[8];
    m.kernel.reduce(row_values, row, *m.attrs, result);
    convert_values(m.kernel.result, result, m.out_dtype, dst, 1);
  }
}

inline void RowLoop::run_map(const Member& m, std::int64_t rows, const std::byte* const* at, std::byte* out, std::size_t out_size,
                             std::size_t in_size, std::byte* scratch) const {
  const std::int64_t row = g_.row;
  const std::span<const Input> ins = inputs_of(m);
  const void* src[max_inputs];
  const auto kernel = m.uniform_last ? m.kernel.map_uniform_last : m.kernel.map;
  auto map = [&](std::int64_t first, std::int64_t n) {
    for (std::size_t k = 0; k < ins.size(); ++k)
      if (ins[k].fixed_at < 0 && ins[k].filled_at < 0) src[k] = at[k] + first * static_cast<std::int64_t>(in_size);
    kernel(m.kernel.state, src, out + first * static_cast<std::int64_t>(out_size), n, false);
  };
  for (std::size_t k = 0; k < ins.size(); ++k) {
    if (ins[k].fixed_at >= 0) src[k] = at[k];
    if (ins[k].filled_at >= 0) src[k] = scratch + ins[k].filled_at;
  }
  const std::int64_t total = rows * m.per;
  if (!m.per_row_inputs && !m.fixed_inputs) {
    map(0, total);
  } else if (!m.per_row_inputs) {
    for (std::int64_t b = 0; b < total; b += kernels::chunk_size) map(b, std::min(kernels::chunk_size, total - b));
  } else if (!m.uniform_last && spread_rows() > 1) {
    // One value per row, read by a full member: each spread over its row, several rows per
    // call, so that short rows (a channel's H x W) do not cost a call each.
    for (std::int64_t r = 0; r < rows; r += spread_rows()) {
      const std::int64_t count = std::min(spread_rows(), rows - r);
      for (std::size_t k = 0; k < ins.size(); ++k)
        if (ins[k].filled_at >= 0)
          for (std::int64_t q = 0; q < count; ++q)
            fill_values(scratch + ins[k].filled_at + q * row * static_cast<std::int64_t>(in_size),
                        at[k] + (r + q) * static_cast<std::int64_t>(in_size), in_size, row);
      map(r * row, count * row);
    }
  } else {
    // One value per row, read by a full member: a run of the row's value, refilled per row.
    // A whole row per call where no fixed value (filled to a chunk) is read: spread values
    // have room for a row.
    const std::int64_t run = m.fixed_inputs ? std::min(kernels::chunk_size, row) : row;
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::size_t k = 0; k < ins.size(); ++k)
        if (ins[k].filled_at >= 0)
          fill_values(scratch + ins[k].filled_at, at[k] + r * static_cast<std::int64_t>(in_size), in_size,
                      m.uniform_last && k + 1 == ins.size() ? 1 : run);
      for (std::int64_t b = 0; b < row; b += run) map(r * row + b, std::min(run, row - b));
    }
  }
}

inline void RowLoop::run_on_views(const Member& m, std::int64_t rows, std::int64_t r0, std::byte* out, const TileBase& base) const {
  const std::int64_t row = g_.row;
  SmallVector<View, 4> args;
  for (const Input& in : inputs_of(m)) {
    if (in.member >= 0 && members_[idx(in.member)].constant) {
      const Node& n = node(in.member);
      args.push_back(View{const_cast<std::byte*>(members_[idx(in.member)].constant_value), n.meta.dtype, Shape{}, Strides{},
                          n.meta.wrapped_number});
      continue;
    }
    if (in.member < 0 && externals_[idx(in.external)].one) {  // zero-dim stays zero-dim, any other single element broadcasts
      const View& v = value(g_.externals[idx(in.external)].position).view;
      args.push_back(v.shape.rank() == 0 ? v : View{v.data, v.dtype, Shape{1, 1}, Strides{0, 0}, v.wrapped_number});
      continue;
    }
    const DType t = in.member >= 0 ? node(in.member).meta.dtype : externals_[idx(in.external)].operand.dtype;
    std::byte* data = in.place.in_tile(r0, base);
    // A one-per-row value read by a full member is broadcast along the row.
    if (in.per == 1 && m.per > 1) args.push_back(View{data, t, Shape{rows, row}, Strides{1, 0}, false});
    else args.push_back(View{data, t, Shape{rows, in.per}, Strides{in.per, 1}, false});
  }
  m.on_views(args, View{out, m.out_dtype, Shape{rows, m.per}, Strides{m.per, 1}, false}, *m.attrs);
}

}  // namespace lt::detail

#pragma once
// The reduction engine: one non-template driver serves every reduction. It maps each output
// element to its row (the reduced elements, in row-major order of the reduced dims), gathers
// the row in fixed chunks into a contiguous buffer of the compute type, and hands each chunk
// to the op's tiny per-chunk function. Chunk results are combined in chunk order, so a
// result depends on the shapes alone, never on how many threads ran.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/kernels/strided.hpp"

namespace lt::kernels {

/// Elements of a row reduced at once: the unit of the fixed split of long rows.
inline constexpr std::int64_t reduce_chunk = 2048;
/// The largest per-op partial result (a chunk's state), in bytes.
inline constexpr std::size_t max_reduce_state = 32;
/// Outputs gathered together when their rows' elements lie far apart.
inline constexpr std::int64_t reduce_tile = 16;
/// Elements between the gathered rows of a tile: padded past reduce_chunk so that the rows
/// do not all fall in the same cache sets.
inline constexpr std::int64_t tile_pitch = reduce_chunk + 8;
/// Rows with fewer outputs than this are split into chunks reduced in parallel.
inline constexpr std::int64_t split_rows_below = 128;

/// A contiguous run of a chunk's elements, where a chunk of a strided row lies in several.
struct RowPiece {
  const void* data;
  std::int64_t n;
};
/// The shortest runs a reducer takes in place: shorter ones are gathered into one array.
inline constexpr std::int64_t min_row_piece = 32;
inline constexpr std::size_t max_row_pieces = reduce_chunk / min_row_piece + 2;

/// The per-op part of a reduction, on states of the op's type held as raw bytes.
struct Reducer {
  DType compute;  // rows are gathered as this type (i64 or f64)
  DType result;   // finish writes this type
  void (*identity)(void* state);  // the state of an empty row; nullptr: the op has none
  void (*reduce)(const void* row, std::int64_t n, std::int64_t first, void* state);  // n >= 1
  // The same for a chunk in pieces (n elements in all), with the same result; nullptr: the op
  // takes contiguous chunks only.
  void (*reduce_pieces)(std::span<const RowPiece> pieces, std::int64_t n, std::int64_t first, void* state);
  void (*combine)(void* acc, const void* next);  // `next` holds the elements after `acc`'s
  void (*finish)(const void* state, std::int64_t count, const Attrs& attrs, void* result);
};

/// Where the elements of each output's row lie in the input.
struct ReducePlan {
  Shape kept, kept_strides;  // the output index space, walked to find each row's first element
  Shape row, row_strides;    // the reduced dims, size-1 dims dropped and mergeable dims merged
  std::int64_t outputs = 1, row_size = 1;
};

/// `dims`: the reduced dims, non-negative; empty means every dim.
inline ReducePlan plan_reduction(const View& in, std::span<const std::int64_t> dims) {
  std::array<bool, max_rank> reduced{};
  for (std::int64_t d : dims) reduced[static_cast<std::size_t>(d)] = true;
  ReducePlan p;
  for (int d = 0; d < in.shape.rank(); ++d) {
    std::int64_t extent = in.shape[d], stride = in.strides[d];
    if (!dims.empty() && !reduced[static_cast<std::size_t>(d)]) {
      p.kept.push_back(extent);
      p.kept_strides.push_back(stride);
      p.outputs *= extent;
      continue;
    }
    p.row_size *= extent;
    if (extent == 1) continue;
    // An outer dim that steps over exactly the inner one merges with it: fewer dims to walk.
    int last = p.row.rank() - 1;
    if (last >= 0 && p.row_strides[last] == stride * extent && extent != 0 && p.row[last] != 0) {
      p.row[last] *= extent;
      p.row_strides[last] = stride;
    } else {
      p.row.push_back(extent);
      p.row_strides.push_back(stride);
    }
  }
  return p;
}

/// Elements [r0, r0 + n) of the row starting at element `base`, as Tc: in `buf`, or in place
/// where they already are a plain array of Tc.
template <class Tc>
const Tc* gather_row(const View& in, const ReducePlan& p, std::int64_t base, std::int64_t r0, std::int64_t n, Tc* buf) {
  return visit(in.dtype, [&]<class T>(Tag<T>) -> const Tc* {
    const T* src = in.ptr<T>() + base;
    if (p.row.rank() <= 1) {
      std::int64_t stride = p.row.rank() == 1 ? p.row_strides[0] : 0;
      if (stride == 1) {
        if constexpr (std::is_same_v<T, Tc>) return src + r0;
        for (std::int64_t i = 0; i < n; ++i) buf[i] = static_cast<Tc>(src[r0 + i]);
      } else {
        for (std::int64_t i = 0; i < n; ++i) buf[i] = static_cast<Tc>(src[(r0 + i) * stride]);
      }
      return buf;
    }
    if (p.row_strides.back() == 1) {  // runs along the contiguous innermost dim
      InnerRuns runs(p.row, p.row_strides, r0);
      for (std::int64_t i = 0; i < n; runs.next()) {
        const std::int64_t take = std::min(runs.left(), n - i);
        const T* run = src + runs.offset();
        // Merged dims keep the innermost stride 1 unless that dim has extent 1.
        if (runs.stride == 1)
          for (std::int64_t k = 0; k < take; ++k) buf[i + k] = static_cast<Tc>(run[k]);
        else
          for (std::int64_t k = 0; k < take; ++k) buf[i + k] = static_cast<Tc>(run[k * runs.stride]);
        i += take;
      }
      return buf;
    }
    OffsetWalker w(p.row, p.row_strides, r0);
    for (std::int64_t i = 0; i < n; ++i, w.next()) buf[i] = static_cast<Tc>(src[w.offset()]);
    return buf;
  });
}

/// Element [r0, r0 + n) of `tile` rows starting at base, base + step, ... into rows of
/// `buf` tile_pitch apart: each step reads `tile` neighbouring elements at once.
template <class Tc>
void gather_tile(const View& in, const ReducePlan& p, std::int64_t base, std::int64_t step, std::int64_t tile,
                 std::int64_t r0, std::int64_t n, Tc* buf) {
  visit(in.dtype, [&]<class T>(Tag<T>) {
    const T* src = in.ptr<T>() + base;
    OffsetWalker w(p.row, p.row_strides, r0);
    for (std::int64_t i = 0; i < n; ++i, w.next()) {
      const T* e = src + w.offset();
      for (std::int64_t t = 0; t < tile; ++t) buf[t * tile_pitch + i] = static_cast<Tc>(e[t * step]);
    }
  });
}

/// Converts n results of dtype `from` into out[at, at + n).
inline void store_results(DType from, const std::byte* results, const View& out, std::int64_t at, std::int64_t n) {
  visit(from, [&]<class R>(Tag<R>) {
    const R* r = reinterpret_cast<const R*>(results);
    visit(out.dtype, [&]<class T>(Tag<T>) {
      T* d = out.ptr<T>() + at;
      for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(r[i]);
    });
  });
}

namespace detail {
struct alignas(16) StateSlot {
  std::byte bytes[max_reduce_state];
};
struct alignas(64) ChunkBuffer {
  std::byte bytes[reduce_chunk * sizeof(double)];
};

/// This thread's buffer for a tile of gathered rows: reused, as it is too large for the stack.
inline std::byte* tile_buffer() {
  thread_local std::vector<double> buffer(static_cast<std::size_t>(reduce_tile * tile_pitch));
  return reinterpret_cast<std::byte*>(buffer.data());
}

/// Calls f with the Tag of a reducer's compute type: i64, f64, or f32 for ops exact in f32.
template <class F>
decltype(auto) visit_reduce_compute(DType t, F&& f) {
  switch (t) {
    case DType::f32: return f(Tag<float>{});
    case DType::f64: return f(Tag<double>{});
    default: return f(Tag<std::int64_t>{});
  }
}

/// Whether a chunk of a row of `p` is read in place as its runs: runs along a contiguous
/// innermost dim, long enough to be worth a call each, already of the type the op reads.
inline bool reads_pieces(const View& in, const ReducePlan& p, const Reducer& r) {
  return r.reduce_pieces != nullptr && in.dtype == r.compute && p.row.rank() >= 2 && p.row_strides.back() == 1 &&
         p.row.back() >= min_row_piece;
}

/// Reduces chunk c of the row starting at `base` into `state`.
inline void reduce_chunk_at(const View& in, const ReducePlan& p, const Reducer& r, std::int64_t base, std::int64_t c,
                            ChunkBuffer& buf, void* state) {
  std::int64_t r0 = c * reduce_chunk, n = std::min(reduce_chunk, p.row_size - r0);
  if (reads_pieces(in, p, r)) {
    // Copying the runs into one array would cost about as much as reducing them.
    std::array<RowPiece, max_row_pieces> pieces;
    std::size_t count = 0;
    const std::byte* src = in.data + base * static_cast<std::int64_t>(itemsize(in.dtype));
    InnerRuns runs(p.row, p.row_strides, r0);
    for (std::int64_t i = 0; i < n; runs.next()) {
      const std::int64_t take = std::min(runs.left(), n - i);
      pieces[count++] = {src + runs.offset() * static_cast<std::int64_t>(itemsize(in.dtype)), take};
      i += take;
    }
    r.reduce_pieces(std::span<const RowPiece>(pieces.data(), count), n, r0, state);
    return;
  }
  const void* row = visit_reduce_compute(r.compute, [&]<class Tc>(Tag<Tc>) -> const void* {
    return gather_row(in, p, base, r0, n, reinterpret_cast<Tc*>(buf.bytes));
  });
  r.reduce(row, n, r0, state);
}
}  // namespace detail

/// out[o] = the op's reduction of row o of `in`. `dims` as in plan_reduction.
inline void reduce_rows(const View& in, const View& out, std::span<const std::int64_t> dims, const Attrs& attrs,
                        const Reducer& r) {
  const ReducePlan p = plan_reduction(in, dims);
  const std::int64_t chunks = (p.row_size + reduce_chunk - 1) / reduce_chunk;
  const std::size_t result_size = itemsize(r.result);
  LT_CHECK(chunks > 0 || r.identity != nullptr, "cannot reduce an empty dim without identity");

  if (chunks > 1 && p.outputs < split_rows_below) {
    // Few long rows: every (row, chunk) pair is a task; each row then combines its chunks.
    std::vector<detail::StateSlot> states(static_cast<std::size_t>(p.outputs * chunks));
    parallel_for_each_block(p.outputs * chunks, reduce_chunk, [&](std::int64_t b, std::int64_t e) {
      detail::ChunkBuffer buf;
      for (std::int64_t k = b; k < e; ++k) {
        std::int64_t base = OffsetWalker(p.kept, p.kept_strides, k / chunks).offset();
        detail::reduce_chunk_at(in, p, r, base, k % chunks, buf, states[static_cast<std::size_t>(k)].bytes);
      }
    });
    alignas(8) std::byte result[sizeof(double)];
    for (std::int64_t o = 0; o < p.outputs; ++o) {
      std::byte* acc = states[static_cast<std::size_t>(o * chunks)].bytes;
      for (std::int64_t c = 1; c < chunks; ++c) r.combine(acc, states[static_cast<std::size_t>(o * chunks + c)].bytes);
      r.finish(acc, p.row_size, attrs, result);
      store_results(r.result, result, out, o, 1);
    }
    return;
  }

  // Rows whose elements lie further apart than neighbouring outputs' (a reduction over
  // outer dims) are gathered a tile of neighbouring outputs at a time, so that memory is read
  // in runs rather than an element per cache line. Each row still reduces the same chunks.
  const std::int64_t inner = p.kept.rank() > 0 ? p.kept.back() : 1;
  const std::int64_t inner_stride = p.kept.rank() > 0 ? p.kept_strides.back() : 0;
  bool tiled = chunks > 0 && inner > 1 && p.row.rank() > 0;
  for (std::int64_t s : p.row_strides) tiled = tiled && std::abs(s) > std::abs(inner_stride);
  constexpr std::int64_t results_block = 256;
  const std::int64_t grain = std::max(parallel_threshold / std::max<std::int64_t>(p.row_size, 1), tiled ? reduce_tile : 1);

  parallel_blocks(p.outputs, grain, [&](std::int64_t b, std::int64_t e) {
    detail::ChunkBuffer buf;
    detail::StateSlot states[reduce_tile], part;
    alignas(8) std::byte results[results_block * sizeof(double)];
    std::int64_t pending = 0, pending_at = b;
    OffsetWalker rows(p.kept, p.kept_strides, b);
    for (std::int64_t o = b; o < e;) {
      std::int64_t m = tiled ? std::min({reduce_tile, e - o, inner - o % inner}) : 1;
      if (chunks == 0) {
        r.identity(states[0].bytes);
      } else if (m == 1) {
        detail::reduce_chunk_at(in, p, r, rows.offset(), 0, buf, states[0].bytes);
        for (std::int64_t c = 1; c < chunks; ++c) {
          detail::reduce_chunk_at(in, p, r, rows.offset(), c, buf, part.bytes);
          r.combine(states[0].bytes, part.bytes);
        }
      } else {
        std::byte* tile = detail::tile_buffer();
        for (std::int64_t c = 0; c < chunks; ++c) {
          std::int64_t r0 = c * reduce_chunk, n = std::min(reduce_chunk, p.row_size - r0);
          detail::visit_reduce_compute(r.compute, [&]<class Tc>(Tag<Tc>) {
            gather_tile(in, p, rows.offset(), inner_stride, m, r0, n, reinterpret_cast<Tc*>(tile));
          });
          for (std::int64_t t = 0; t < m; ++t) {
            const std::byte* row = tile + static_cast<std::size_t>(t * tile_pitch) * itemsize(r.compute);
            r.reduce(row, n, r0, c == 0 ? states[t].bytes : part.bytes);
            if (c > 0) r.combine(states[t].bytes, part.bytes);
          }
        }
      }
      for (std::int64_t t = 0; t < m; ++t, rows.next())
        r.finish(states[t].bytes, p.row_size, attrs, results + static_cast<std::size_t>(pending++) * result_size);
      o += m;
      if (pending > results_block - reduce_tile || o == e) {
        store_results(r.result, results, out, pending_at, pending);
        pending_at += pending;
        pending = 0;
      }
    }
  });
}

}  // namespace lt::kernels

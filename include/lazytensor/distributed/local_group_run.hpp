#pragma once
// LocalGroup's meetings and collectives, defined: included once per program, by the
// implementation (lazytensor/implementation.hpp).
#include <algorithm>
#include <cstring>
#include <exception>
#include <sstream>

#include "lazytensor/core/error.hpp"
#include "lazytensor/core/hash.hpp"
#include "lazytensor/distributed/combine.hpp"
#include "lazytensor/distributed/local_group.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"

namespace lt::distributed {

namespace detail {
using lt::detail::CollectiveCall;
using lt::detail::CollectiveKind;

inline std::string describe(const CollectiveCall& c) {
  std::ostringstream os;
  os << lt::detail::collective_name(c.kind);
  if (c.kind == CollectiveKind::all_reduce || c.kind == CollectiveKind::reduce_scatter) os << ' ' << reduce_op_name(c.op);
  if (c.kind == CollectiveKind::all_gather || c.kind == CollectiveKind::reduce_scatter) os << " dim " << c.dim;
  if (c.kind == CollectiveKind::broadcast) os << " root " << c.root;
  os << ' ' << c.in.dtype << c.in.shape;
  return os.str();
}

/// Rows of a [outer, rest] view of `v` split at `dim`: outer = the extents before it.
inline std::int64_t rows_before(const View& v, int dim) {
  std::int64_t outer = 1;
  for (int d = 0; d < dim; ++d) outer *= v.shape[d];
  return outer;
}

/// Splits [0, n) into `parts` runs of whole cache lines; returns run `k`.
inline std::pair<std::int64_t, std::int64_t> share(std::int64_t n, int parts, int k, std::size_t item) {
  const std::int64_t align = std::max<std::int64_t>(1, 64 / static_cast<std::int64_t>(item));
  const std::int64_t per = ((n + parts - 1) / parts + align - 1) / align * align;
  return {std::min(n, per * k), std::min(n, per * (k + 1))};
}

/// reduce_range over [begin, end), cut into blocks that the replica's threads share.
inline void reduce_shared(ReduceOp op, DType t, std::span<const std::byte* const> sources,
                          std::span<std::byte* const> targets, std::int64_t begin, std::int64_t end) {
  constexpr std::int64_t block = 1 << 16;
  const std::int64_t blocks = (end - begin + block - 1) / block;
  // Results far larger than the caches are not read back from them: streamed past.
  const bool stream = (end - begin) * static_cast<std::int64_t>(itemsize(t) * targets.size()) >= kernels::streaming_store_bytes;
  kernels::parallel_blocks(blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    reduce_range(op, t, sources, targets, begin + b0 * block, std::min(end, begin + b1 * block), stream);
    if (stream) kernels::pk::stream_fence();
  });
}
}  // namespace detail

inline bool LocalGroup::abort(const std::string& why) {
  std::lock_guard lock(mu_);
  if (!aborted_.empty()) return false;
  aborted_ = why;
  cv_.notify_all();
  return true;
}

inline void LocalGroup::meet(int local, std::string_view what) {
  std::unique_lock lock(mu_);
  auto raise = [&] { fail(what, " on replica ", ordinal_of(local), ": ", aborted_); };
  if (!aborted_.empty()) raise();
  const std::uint64_t meeting = meeting_;
  here_[static_cast<std::size_t>(local)] = 1;
  if (++arrived_ == replicas_) {
    arrived_ = 0;
    std::fill(here_.begin(), here_.end(), 0);
    ++meeting_;
    cv_.notify_all();
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (meeting_ == meeting) {
    if (!aborted_.empty()) raise();
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && meeting_ == meeting && aborted_.empty()) {
      std::string missing;
      for (int r = 0; r < replicas_; ++r)
        if (!here_[static_cast<std::size_t>(r)]) missing += (missing.empty() ? "" : ", ") + std::to_string(ordinal_of(r));
      aborted_ = "replica " + missing + " did not arrive within " + std::to_string(timeout_.count() / 1000) +
                 " s (LT_COLLECTIVE_TIMEOUT)";
      cv_.notify_all();
    }
  }
}

inline void LocalGroup::check_posts(std::string_view what) const {
  bool same = true;
  for (const Post& p : posts_) same = same && p.what == posts_[0].what;
  if (same) return;
  std::string all;
  for (int r = 0; r < replicas_; ++r)
    all += (r ? "; " : "") + std::string("replica ") + std::to_string(ordinal_of(r)) + " has " + posts_[static_cast<std::size_t>(r)].what;
  fail(what, ": the replicas disagree: ", all);
}

inline void LocalGroup::check_processes(int local, std::string_view what) {
  if (local == 0) {
    process_mismatch_.clear();
    const hash_t mine = hash_bytes(posts_[0].what.data(), posts_[0].what.size());
    std::vector<hash_t> all(static_cast<std::size_t>(processes_));
    link_->all_gather(reinterpret_cast<const std::byte*>(&mine), sizeof mine, reinterpret_cast<std::byte*>(all.data()));
    for (int p = 0; p < processes_; ++p)
      if (all[static_cast<std::size_t>(p)] != mine)
        process_mismatch_ += (process_mismatch_.empty() ? "" : ", ") + std::to_string(p);
  }
  meet(local, what);
  if (!process_mismatch_.empty())
    fail(what, ": the processes disagree: process ", rank_, " has ", posts_[0].what, ", process ", process_mismatch_,
         " another call");
}

template <class F>
void LocalGroup::guarded(int local, std::string_view what, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    abort("replica " + std::to_string(ordinal_of(local)) + " failed in " + std::string(what) + ": " + e.what());
    throw;
  }
}

inline void LocalGroup::collective(int local, const detail::CollectiveCall& call) {
  posts_[static_cast<std::size_t>(local)] = Post{detail::describe(call), &call, {}};
  const std::string_view name = lt::detail::collective_name(call.kind);
  meet(local, name);
  check_posts(name);
  if (processes_ > 1) {
    check_processes(local, name);
    return run_across_processes(local, call);
  }
  guarded(local, name, [&] { run_in_process(local, call); });
  meet(local, name);  // nobody frees an input that another replica still reads
}

inline void LocalGroup::run_in_process(int local, const detail::CollectiveCall& call) {
  using detail::CollectiveKind;
  const std::size_t item = itemsize(call.in.dtype);
  std::vector<const std::byte*> in;
  std::vector<std::byte*> out;
  for (const Post& p : posts_) {
    in.push_back(p.call->in.data);
    out.push_back(p.call->out.data);
  }
  switch (call.kind) {
    case CollectiveKind::all_reduce: {
      auto [b, e] = detail::share(call.in.numel(), replicas_, local, item);
      detail::reduce_shared(call.op, call.in.dtype, in, out, b, e);
      break;
    }
    case CollectiveKind::all_gather: {
      // This replica's input goes to its slot of every output.
      const std::int64_t outer = detail::rows_before(call.in, call.dim);
      const auto row = outer == 0 ? 0 : static_cast<std::size_t>(call.in.numel() / outer) * item;
      for (std::byte* o : out)
        for (std::int64_t r = 0; r < outer; ++r)
          std::memcpy(o + (static_cast<std::size_t>(r * replicas_ + local)) * row, call.in.data + static_cast<std::size_t>(r) * row, row);
      break;
    }
    case CollectiveKind::reduce_scatter: {
      // This replica's shard of each row, reduced over every replica's input.
      const std::int64_t outer = detail::rows_before(call.in, call.dim);
      const std::int64_t shard = outer == 0 ? 0 : call.out.numel() / outer;
      for (std::int64_t r = 0; r < outer; ++r) {
        std::vector<const std::byte*> row_in;
        for (const std::byte* p : in) row_in.push_back(p + static_cast<std::size_t>((r * replicas_ + local) * shard) * item);
        std::byte* row_out = call.out.data + static_cast<std::size_t>(r * shard) * item;
        detail::reduce_shared(call.op, call.in.dtype, row_in, std::span<std::byte* const>(&row_out, 1), 0, shard);
      }
      break;
    }
    case CollectiveKind::broadcast: {
      const View& root = posts_[static_cast<std::size_t>(call.root)].call->in;
      if (call.out.numel() > 0) std::memcpy(call.out.data, root.data, static_cast<std::size_t>(call.out.numel()) * item);
      break;
    }
  }
}

}  // namespace lt::distributed

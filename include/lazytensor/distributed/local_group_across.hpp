#pragma once
// LocalGroup across processes, and host exchanges (rendezvous, mesh_reduce). The replicas of a
// process first combine their values in the staging buffer; the process's first replica then
// combines the processes' staging buffers through the link; last, each replica takes its
// result from the staging buffer. A reduction is thus one fixed tree: over the replicas of
// each process, then over the processes.
#include <cstring>

#include "lazytensor/distributed/local_group_run.hpp"

namespace lt::distributed {

inline void LocalGroup::run_across_processes(int local, const detail::CollectiveCall& call) {
  using detail::CollectiveKind;
  const std::string_view name = lt::detail::collective_name(call.kind);
  const std::size_t item = itemsize(call.in.dtype);
  const std::int64_t n = call.in.numel();
  const std::int64_t outer = detail::rows_before(call.in, call.dim);
  const std::size_t row = outer == 0 ? 0 : static_cast<std::size_t>(n / outer) * item;  // all_gather's input row
  const int world = replicas_ * processes_, me = ordinal_of(local);
  if (replicas_ == 1 && call.kind == CollectiveKind::all_reduce) {
    // One replica per process: the link reads the input and writes the output in place.
    check_processes(local, name);
    guarded(local, name, [&] { link_->all_reduce(call.op, call.in.dtype, call.in.data, call.out.data, n); });
    return;
  }
  if (local == 0) guarded(local, name, [&] { staging_.resize(static_cast<std::size_t>(n) * item * (call.kind == CollectiveKind::all_gather ? static_cast<std::size_t>(replicas_) : 1)); });
  check_processes(local, name);

  guarded(local, name, [&] {  // this process's part, in the staging buffer
    std::byte* staging = staging_.data();
    switch (call.kind) {
      case CollectiveKind::all_reduce:
      case CollectiveKind::reduce_scatter: {
        std::vector<const std::byte*> in;
        for (const Post& p : posts_) in.push_back(p.call->in.data);
        auto [b, e] = detail::share(n, replicas_, local, item);
        detail::reduce_shared(call.op, call.in.dtype, in, std::span<std::byte* const>(&staging, 1), b, e);
        break;
      }
      case CollectiveKind::all_gather:
        for (std::int64_t r = 0; r < outer; ++r)
          std::memcpy(staging + static_cast<std::size_t>(r * replicas_ + local) * row, call.in.data + static_cast<std::size_t>(r) * row, row);
        break;
      case CollectiveKind::broadcast:
        if (me == call.root && n > 0) std::memcpy(staging, call.in.data, static_cast<std::size_t>(n) * item);
        break;
    }
  });
  meet(local, name);
  if (local == 0) {
    guarded(local, name, [&] {
      switch (call.kind) {
        case CollectiveKind::all_reduce:
        case CollectiveKind::reduce_scatter: link_->all_reduce(call.op, call.in.dtype, staging_.data(), staging_.data(), n); break;
        case CollectiveKind::all_gather:
          received_.resize(staging_.size() * static_cast<std::size_t>(processes_));
          link_->all_gather(staging_.data(), staging_.size(), received_.data());
          break;
        case CollectiveKind::broadcast: link_->broadcast(staging_.data(), staging_.size(), call.root / replicas_); break;
      }
    });
  }
  meet(local, name);

  guarded(local, name, [&] {  // each replica's result
    const std::byte* staging = staging_.data();
    switch (call.kind) {
      case CollectiveKind::all_reduce: {
        std::vector<std::byte*> out;
        for (const Post& p : posts_) out.push_back(p.call->out.data);
        auto [b, e] = detail::share(n, replicas_, local, item);
        for (std::byte* o : out) std::memcpy(o + b * static_cast<std::int64_t>(item), staging + b * static_cast<std::int64_t>(item), static_cast<std::size_t>(e - b) * item);
        break;
      }
      case CollectiveKind::reduce_scatter: {
        const std::size_t shard = outer == 0 ? 0 : static_cast<std::size_t>(call.out.numel() / outer) * item;
        for (std::int64_t r = 0; r < outer; ++r)
          std::memcpy(call.out.data + static_cast<std::size_t>(r) * shard, staging + static_cast<std::size_t>(r * world + me) * shard, shard);
        break;
      }
      case CollectiveKind::all_gather: {
        // received: [process][row][replica]; out: [row][process][replica].
        const std::size_t block = row * static_cast<std::size_t>(replicas_);
        for (int p = 0; p < processes_; ++p)
          for (std::int64_t r = 0; r < outer; ++r)
            std::memcpy(call.out.data + (static_cast<std::size_t>(r) * static_cast<std::size_t>(processes_) + static_cast<std::size_t>(p)) * block,
                        received_.data() + static_cast<std::size_t>(p) * staging_.size() + static_cast<std::size_t>(r) * block, block);
        break;
      }
      case CollectiveKind::broadcast:
        if (n > 0) std::memcpy(call.out.data, staging, static_cast<std::size_t>(n) * item);
        break;
    }
  });
  meet(local, name);
}

inline std::vector<std::byte> LocalGroup::exchange(int local, std::string_view tag, std::span<const std::byte> bytes) {
  const std::string what = "rendezvous '" + std::string(tag) + "' of " + std::to_string(bytes.size()) + " bytes";
  posts_[static_cast<std::size_t>(local)] = Post{what, nullptr, bytes};
  meet(local, what);
  check_posts(what);
  std::vector<std::byte> all;
  if (processes_ == 1) {
    for (const Post& p : posts_) all.insert(all.end(), p.bytes.begin(), p.bytes.end());
    meet(local, what);
    return all;
  }
  if (local == 0) guarded(local, what, [&] { staging_.resize(bytes.size() * static_cast<std::size_t>(replicas_)); });
  check_processes(local, what);
  if (local == 0) {
    guarded(local, what, [&] {
      std::size_t at = 0;
      for (const Post& p : posts_) {
        if (!p.bytes.empty()) std::memcpy(staging_.data() + at, p.bytes.data(), p.bytes.size());
        at += p.bytes.size();
      }
      received_.resize(staging_.size() * static_cast<std::size_t>(processes_));
      link_->all_gather(staging_.data(), staging_.size(), received_.data());
    });
  }
  meet(local, what);
  all.assign(received_.begin(), received_.end());
  meet(local, what);
  return all;
}

}  // namespace lt::distributed

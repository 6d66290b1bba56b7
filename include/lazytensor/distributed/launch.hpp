#pragma once
// Replicas: lt::launch runs a function once per replica, each on a thread of its own with a
// lazy device of its own, as PyTorch/XLA's spawn runs one per device. Under a process launcher
// (mpirun -np P) every process runs its replicas and the world spans them all.
#include <cstddef>
#include <cstring>
#include <functional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "lazytensor/core/replica.hpp"

namespace lt {

/// Options of lt::launch.
struct LaunchOptions {
  /// Replicas in this process. Each gets `lazy:<local ordinal>` as lt::device() and an equal
  /// share of the threads (LT_NUM_THREADS, else every core), at least one.
  int replicas = 1;
  /// Sums that may run over examples (reverse mode's reductions, products) are traced as fixed
  /// pairwise trees of per-example terms, and collectives combine the replicas in the same
  /// tree: a model without batch statistics then trains to bitwise the same parameters for
  /// every power-of-two count of replicas splitting one power-of-two global batch into
  /// contiguous shares. Products cost their full [M, K, N] of terms: for checking, not for
  /// speed. LT_REPRODUCIBLE=1 turns it on for every launch.
  bool reproducible = false;
};

/// Runs `fn(ordinal)` on `options.replicas` threads and returns when all have returned and
/// their devices have finished every step. When a replica throws, the others are released from
/// any collective with lt::Error naming it, and launch rethrows the first replica's error; the
/// program may launch again. Across processes a failed replica ends the run (MPI_Abort), since
/// the other processes could wait for it forever. Each replica draws random numbers from a
/// generator of its own, started from the caller's state, so every replica draws the same.
///
///   lt::launch([&](int ordinal) { train(ordinal); }, {.replicas = 2});
void launch(const std::function<void(int)>& fn, LaunchOptions options = {});

namespace detail {
/// Every replica's `bytes`, all of one size, in ordinal order (rendezvous and mesh_reduce).
std::vector<std::byte> exchange_host(std::string_view tag, std::span<const std::byte> bytes);
}  // namespace detail

/// Combines a host value over the replicas: `fn` receives every replica's value in ordinal
/// order, and every replica gets fn's result (PyTorch/XLA's mesh_reduce).
///
///   double total = lt::mesh_reduce("correct", correct, [](std::vector<double> v) {
///     return std::accumulate(v.begin(), v.end(), 0.0); });
template <class T, class Fn>
  requires std::is_trivially_copyable_v<T>
auto mesh_reduce(std::string_view tag, const T& value, Fn&& fn) {
  std::vector<std::byte> all = detail::exchange_host(tag, std::as_bytes(std::span<const T>(&value, 1)));
  std::vector<T> values(all.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), all.data(), all.size());
  return std::forward<Fn>(fn)(std::move(values));
}

}  // namespace lt

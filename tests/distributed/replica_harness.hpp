#pragma once
// Helpers of the replica tests: per-replica inputs made from (ordinal, index) alone, and a
// table of per-replica results that the test checks after lt::launch returns.
#include <lazytensor/data.hpp>
#include <lazytensor/distributed.hpp>
#include <lazytensor/lazytensor.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>

#include <cstdint>
#include <mutex>
#include <vector>

namespace lt::test {

/// Element i of replica `ordinal`'s input: small integers (exact in every dtype), of both signs,
/// with ties between replicas for max and min.
inline double replica_value(int ordinal, std::int64_t i) {
  return static_cast<double>(((i * 7 + ordinal * 13) % 23) - 11) + (ordinal % 2 == 0 ? 0.25 : 0.5);
}

/// Replica `ordinal`'s input of `shape` and dtype `t` on `dev` (integer dtypes truncate).
inline Tensor replica_input(int ordinal, const Shape& shape, DType t, Device dev) {
  std::vector<double> v(static_cast<std::size_t>(shape.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = replica_value(ordinal, static_cast<std::int64_t>(i));
  return from_vector(v, shape).to(t).to(dev);
}

/// Each replica's result, by ordinal.
struct PerReplica {
  explicit PerReplica(int replicas) : values(static_cast<std::size_t>(replicas)) {}
  void set(int ordinal, std::vector<double> v) {
    std::lock_guard lock(mu);
    values[static_cast<std::size_t>(ordinal)] = std::move(v);
  }
  std::mutex mu;
  std::vector<std::vector<double>> values;
};

}  // namespace lt::test

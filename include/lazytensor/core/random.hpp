#pragma once
// Random numbers: the counter-based Philox-4x32-10 generator and the seed state of a device.
// Block i of a random call is a pure function of (seed, offset + i), so kernels can draw in
// parallel in any order, and the eager and lazy devices give the same values for one seed.
#include <array>
#include <cstdint>
#include <mutex>

namespace lt {

/// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011):
/// ten rounds of the Philox S-box over a 128-bit counter under a 64-bit key.
inline std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> ctr, std::array<std::uint32_t, 2> key) {
  constexpr std::uint64_t mul0 = 0xD2511F53, mul1 = 0xCD9E8D57;
  constexpr std::uint32_t weyl0 = 0x9E3779B9, weyl1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    std::uint64_t p0 = mul0 * ctr[0], p1 = mul1 * ctr[2];
    ctr = {static_cast<std::uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<std::uint32_t>(p0)};
    key[0] += weyl0;
    key[1] += weyl1;
  }
  return ctr;
}

/// Block `index` of the stream of `seed`: 128 random bits.
inline std::array<std::uint32_t, 4> random_bits(std::uint64_t seed, std::uint64_t index) {
  return philox4x32_10({static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), 0, 0},
                       {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
}

/// Where a random call draws from: the stream `seed`, blocks from `offset` on.
struct RandomState {
  std::uint64_t seed = 0;    ///< the Philox key: the stream
  std::uint64_t offset = 0;  ///< the first 128-bit block not yet drawn
  friend bool operator==(const RandomState&, const RandomState&) = default;
};

/// The seed and the next free block of a device's random stream. Each random call claims the
/// blocks it draws, so successive calls never reuse values. Thread-safe.
class Generator {
 public:
  /// PyTorch's default seed, so that an unseeded program is still reproducible.
  static constexpr std::uint64_t default_seed = 67280421310721;

  /// A generator at the start of the stream of `seed`.
  explicit Generator(std::uint64_t seed = default_seed) : state_{seed, 0} {}

  /// Restarts the stream of `seed`.
  void manual_seed(std::uint64_t seed) { set_state({seed, 0}); }

  /// Where the next random call will draw: the seed and the first unclaimed block. Save it
  /// (a checkpoint does) and give it to set_state() to draw the same values again.
  RandomState state() const {
    std::lock_guard lock(mutex_);
    return state_;
  }
  /// Resumes from a state taken with state(): the next random call draws exactly what the
  /// call after state() drew (torch.Generator.set_state's role; the state is two integers,
  /// not a byte tensor).
  void set_state(RandomState s) {
    std::lock_guard lock(mutex_);
    state_ = s;
  }

  /// Claims `count` blocks for one call: returns where they start and moves past them.
  RandomState reserve(std::uint64_t count) {
    std::lock_guard lock(mutex_);
    RandomState claimed = state_;
    state_.offset += count;
    return claimed;
  }

 private:
  mutable std::mutex mutex_;
  RandomState state_;
};

namespace detail {
/// Set on a replica's thread by lt::launch: each replica draws from a generator of its own, so
/// that its draws do not depend on how the replicas' threads interleave.
inline thread_local Generator* replica_generator = nullptr;
}  // namespace detail

/// The generator of the process (of the replica, on a replica's thread), shared by the eager
/// and the lazy devices.
inline Generator& default_generator() {
  if (detail::replica_generator != nullptr) return *detail::replica_generator;
  static Generator g;
  return g;
}

/// Seeds the default generator (torch.manual_seed).
inline void manual_seed(std::uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace lt

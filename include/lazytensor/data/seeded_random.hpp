#pragma once
// Random numbers for data pipelines, drawn from a seed of their own: shuffling and fake data
// stay reproducible whatever the program draws from lt::manual_seed's generator.
#include <cstdint>
#include <limits>

#include "lazytensor/core/error.hpp"
#include "lazytensor/core/random.hpp"

namespace lt::data {

/// A stream of 64-bit draws: Philox-4x32-10 keyed by `seed`, counting blocks within `stream`
/// (an epoch, say), so every (seed, stream) pair names its own reproducible sequence.
class SeededRandom {
 public:
  SeededRandom(std::uint64_t seed, std::uint64_t stream) : seed_(seed), stream_(stream) {}

  std::uint64_t next_u64() {
    if (spare_) {
      spare_ = false;
      return spare_value_;
    }
    auto r = philox4x32_10({static_cast<std::uint32_t>(block_), static_cast<std::uint32_t>(block_ >> 32),
                            static_cast<std::uint32_t>(stream_), static_cast<std::uint32_t>(stream_ >> 32)},
                           {static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32)});
    ++block_;
    spare_ = true;
    spare_value_ = std::uint64_t{r[2]} | std::uint64_t{r[3]} << 32;
    return std::uint64_t{r[0]} | std::uint64_t{r[1]} << 32;
  }

  /// Uniform in [0, bound): draws that would favour small values are redrawn.
  std::uint64_t below(std::uint64_t bound) {
    LT_CHECK(bound > 0, "SeededRandom::below: the bound must be positive");
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t usable = max - (max % bound + 1) % bound;  // draws in [0, usable] are unbiased
    for (;;)
      if (std::uint64_t x = next_u64(); x <= usable) return x % bound;
  }

  /// Uniform in [0, 1) with 24 random bits: every value is an exact float.
  float uniform_float() { return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f; }

 private:
  std::uint64_t seed_, stream_;
  std::uint64_t block_ = 0;
  bool spare_ = false;
  std::uint64_t spare_value_ = 0;
};

}  // namespace lt::data

#pragma once
// 64-bit hashing (xxHash3) and a typed combine for IR node and graph keys.
#include <cstdint>
#include <type_traits>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace lt {

using hash_t = std::uint64_t;

inline hash_t hash_bytes(const void* p, std::size_t n, hash_t seed = 0) {
  return XXH3_64bits_withSeed(p, n, seed);
}

/// Mixes a trivially copyable value into a running hash.
template <class T>
  requires std::is_trivially_copyable_v<T>
inline hash_t hash_combine(hash_t h, const T& v) {
  return hash_bytes(&v, sizeof v, h);
}

/// A hash combine usable in constant expressions (xxHash3 is not): structural hashes of
/// expression types are computed by the compiler. splitmix64's finaliser mixes the bits.
constexpr hash_t static_combine(hash_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

/// Stands in for an absent optional attribute, so that "absent" never hashes like a value.
inline constexpr std::uint64_t absent_marker = 0x9e3779b97f4a7c15ull;

}  // namespace lt

#pragma once
// Settings read from the environment (LT_*), each read once by its user and kept for the
// life of the process.
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace lt::detail {

/// A switch: `unset` when the variable is absent or empty, off for "0", on for anything else.
inline bool env_flag(const char* name, bool unset) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return unset;
  return std::string_view(v) != "0";
}

/// A count: `fallback` when the variable is absent, empty, not a whole number, or negative.
inline std::int64_t env_count(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  return *end == '\0' && n >= 0 ? static_cast<std::int64_t>(n) : fallback;
}

}  // namespace lt::detail

#pragma once
// ops/kernel_levels.hpp's choice of kernels, defined once per program: included by the
// implementation (lazytensor/implementation.hpp), never by a file of its own.
// LAZYTENSOR_KERNEL_LEVELS: the build compiled a copy per level besides its own
// (cmake/lazytensorImplementation.cmake); a build without it runs its own copy alone.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "lazytensor/core/error.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/ops/kernels/gemm.hpp"

#ifdef LAZYTENSOR_KERNEL_LEVELS
extern "C" const ::lt::LevelKernels lt_kernels_level_v2, lt_kernels_level_avx2, lt_kernels_level_avx512,
    lt_kernels_level_avx512_bf16;
#endif

namespace lt {

namespace detail {
/// The build's own copy: the op layer compiled with the implementation's flags.
constexpr LevelKernels own_level_kernels{compiled_capability(), &ops_by_id, &kernels::gemm_backend};

/// Every copy this build has, lowest level first.
inline std::vector<const LevelKernels*> compiled_level_kernels() {
  std::vector<const LevelKernels*> all{&own_level_kernels};
#ifdef LAZYTENSOR_KERNEL_LEVELS
  all.insert(all.end(), {&lt_kernels_level_v2, &lt_kernels_level_avx2, &lt_kernels_level_avx512, &lt_kernels_level_avx512_bf16});
#endif
  std::stable_sort(all.begin(), all.end(), [](auto* a, auto* b) { return a->level < b->level; });
  return all;
}

}  // namespace detail

const LevelKernels& kernels_at(std::string_view name) {
  const std::vector<const LevelKernels*> all = detail::compiled_level_kernels();
  const CpuCapability best = best_cpu_capability();
  if (!name.empty()) {
    const std::optional<CpuCapability> level = parse_capability(name);
    LT_CHECK(level.has_value(), "LT_CPU_CAPABILITY=", name, ": not a capability level (baseline, v2, avx2, avx512, avx512_bf16)");
    LT_CHECK(cpu_supports(*level), "LT_CPU_CAPABILITY=", name, ": a level above this CPU's (", capability_name(best), ", ",
             cpu_model_name(), ")");
    for (const LevelKernels* k : all)
      if (k->level == *level) return *k;
    fail("LT_CPU_CAPABILITY=", name, ": not compiled in this build (it has ", compiled_levels(), ")");
  }
  // The highest compiled level the CPU runs; the build's own copy where none is (a build
  // whose own flags are above the CPU's cannot run at all, whatever is chosen here).
  const LevelKernels* chosen = all.front();
  for (const LevelKernels* k : all)
    if (cpu_supports(k->level)) chosen = k;
  return *chosen;
}

std::string compiled_levels() {
  std::string names;
  for (const LevelKernels* k : detail::compiled_level_kernels()) names += (names.empty() ? "" : ", ") + std::string(capability_name(k->level));
  return names;
}

const LevelKernels& running_kernels() {
  static const LevelKernels& chosen = [&]() -> const LevelKernels& {
    const char* asked = std::getenv("LT_CPU_CAPABILITY");
    const LevelKernels& k = kernels_at(asked != nullptr ? asked : "");
    metrics::set_info("CpuCapability", detail::concat(capability_name(k.level), " (CPU: ", cpu_model_name(), ")"));
    metrics::set_info("GemmBackend", k.gemm_backend());
    return k;
  }();
  return chosen;
}

namespace detail {
// Names the level and the product libraries in the metrics of every program, before its first
// step; a bad LT_CPU_CAPABILITY is raised at that step instead.
inline const bool kernels_noted = [] {
  try {
    running_kernels();
  } catch (const Error&) {
  }
  return true;
}();
}  // namespace detail

}  // namespace lt

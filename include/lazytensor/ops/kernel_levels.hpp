#pragma once
// Kernels chosen at run time. The implementation compiles the op layer once with the build's
// own flags and once more per capability level (cmake/lazytensor_kernels.cpp); each copy
// exports its descriptors, whose kernels are that level's, and the process runs one copy,
// picked at load from CPUID or forced by LT_CPU_CAPABILITY. Tracing and planning use the
// descriptors every file sees; the executors ask at_running_level for the kernels.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "lazytensor/core/cpu_capability.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/registry.hpp"

namespace lt {

/// What one compiled copy of the op layer exports.
struct LevelKernels {
  CpuCapability level;
  /// This copy's descriptors by op id (nullptr for an unused id).
  const std::array<const OpDesc*, op_id_limit>* ops;
  /// The libraries its products run on, as the metrics' GemmBackend line names them.
  std::string (*gemm_backend)();
};

/// The copy this process runs (chosen on the first call, kept for the life of the process).
/// Throws lt::Error where LT_CPU_CAPABILITY names no level, a level above this CPU's, or one
/// this build did not compile.
const LevelKernels& running_kernels();

/// The copy of level `name` ("baseline", "v2", ...; empty: the highest compiled level this CPU
/// runs), as LT_CPU_CAPABILITY chooses it. Throws lt::Error naming the level asked for and the
/// CPU's where `name` is no level, a level above this CPU's, or one this build did not compile.
const LevelKernels& kernels_at(std::string_view name);

/// The levels this build compiled, lowest first.
std::string compiled_levels();

/// `d` as the running level compiles it: the same op, with that level's kernels. A
/// descriptor outside the registry (a fragment's, made in a user's file) is its own.
inline const OpDesc& at_running_level(const OpDesc& d) {
  const auto i = static_cast<std::size_t>(d.id);
  if (i >= op_id_limit || find_op(d.id) != &d) return d;
  const OpDesc* leveled = (*running_kernels().ops)[i];
  return leveled != nullptr ? *leveled : d;
}

}  // namespace lt

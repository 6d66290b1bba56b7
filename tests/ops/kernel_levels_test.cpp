// The choice of kernels by capability level: what LT_CPU_CAPABILITY may name, and what the
// running copy is.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/ops/kernel_levels.hpp>

namespace lt {
namespace {

std::string error_of(std::string_view name) {
  try {
    kernels_at(name);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(KernelLevels, ABadNameIsRefusedWithTheLevelsThereAre) {
  const std::string e = error_of("avx9000");
  EXPECT_NE(e.find("LT_CPU_CAPABILITY=avx9000: not a capability level"), std::string::npos) << e;
  EXPECT_NE(e.find("avx512_bf16"), std::string::npos) << e;
}

TEST(KernelLevels, ALevelAboveTheCpusIsRefusedNamingBoth) {
  const CpuCapability best = best_cpu_capability();
  if (best == CpuCapability::avx512_bf16) GTEST_SKIP() << "this CPU runs every level";
  const auto above = static_cast<CpuCapability>(static_cast<int>(best) + 1);
  const std::string e = error_of(capability_name(above));
  EXPECT_NE(e.find(std::string(capability_name(above)) + ": a level above this CPU's (" + std::string(capability_name(best))),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(cpu_model_name()), std::string::npos) << e;
}

TEST(KernelLevels, EachLevelTheCpuRunsIsItsOwnCopy) {
  // Every level this CPU runs and the build compiled is a copy whose descriptors are its own,
  // of the same ops: at_running_level maps each registered op to the running copy's.
  int found = 0;
  for (int k = 0; k < cpu_capability_count; ++k) {
    const auto level = static_cast<CpuCapability>(k);
    if (!cpu_supports(level) || !error_of(capability_name(level)).empty()) continue;
    const LevelKernels& copy = kernels_at(capability_name(level));
    EXPECT_EQ(copy.level, level);
    for (const OpDesc* op : registered_ops) {
      const OpDesc* leveled = (*copy.ops)[static_cast<std::size_t>(op->id)];
      ASSERT_NE(leveled, nullptr) << op->name;
      EXPECT_EQ(leveled->id, op->id);
      EXPECT_EQ(leveled->name, op->name);
      EXPECT_EQ(leveled->kind, op->kind);
    }
    ++found;
  }
  EXPECT_GE(found, 1);
  const LevelKernels& running = running_kernels();
  const char* asked = std::getenv("LT_CPU_CAPABILITY");  // the per-level runs of this program set it
  EXPECT_EQ(&running, &kernels_at(asked != nullptr ? asked : ""));
  for (const OpDesc* op : registered_ops) EXPECT_EQ(&at_running_level(*op), (*running.ops)[static_cast<std::size_t>(op->id)]);
}

}  // namespace
}  // namespace lt

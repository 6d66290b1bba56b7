// Linked into every test program: names the CPU and the kernels' capability level in the log,
// and skips a program asked (LT_CPU_CAPABILITY) for a level this CPU does not have, printing
// the line that CTest's SKIP_REGULAR_EXPRESSION of the per-level runs looks for.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <lazytensor/core/cpu_capability.hpp>
#include <lazytensor/ops/kernel_levels.hpp>

namespace {

class KernelLevelBanner : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* asked = std::getenv("LT_CPU_CAPABILITY");
    if (asked != nullptr && *asked != '\0') {
      const auto level = lt::parse_capability(asked);
      if (level.has_value() && !lt::cpu_supports(*level)) {
        std::printf("lazytensor: capability level %s is not available on this CPU (%s): skipped\n", asked,
                    lt::cpu_model_name().c_str());
        std::fflush(stdout);
        std::exit(0);
      }
    }
    const lt::LevelKernels& running = lt::running_kernels();
    std::printf("lazytensor: CPU %s; kernels at level %s (this build has %s; this CPU runs up to %s)\n",
                lt::cpu_model_name().c_str(), std::string(lt::capability_name(running.level)).c_str(),
                lt::compiled_levels().c_str(), std::string(lt::capability_name(lt::best_cpu_capability())).c_str());
    std::fflush(stdout);
  }
};

const auto* const banner = ::testing::AddGlobalTestEnvironment(new KernelLevelBanner);

}  // namespace

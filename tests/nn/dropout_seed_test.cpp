// Dropout is seeded (manual_seed gives the same mask again) and fuses with its neighbours on
// the lazy device: the random draw, then one kernel.
#include "nn_test_util.hpp"

namespace lt::test {
namespace {

std::vector<double> dropped(std::uint64_t seed, Device dev) {
  manual_seed(seed);
  Tensor x = ones({64, 64}, dev);
  return values(dropout(x * 2, 0.5, true));
}

TEST(NnDropoutSeed, TheSameSeedGivesTheSameMask) {
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    std::vector<double> a = dropped(7, dev), b = dropped(7, dev), c = dropped(8, dev);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    std::size_t kept = 0;
    for (double v : a) {
      EXPECT_TRUE(v == 0 || v == 4) << v;  // 2 / (1 - 0.5) where kept
      kept += v != 0;
    }
    EXPECT_GT(kept, a.size() * 4 / 10);  // 2048 expected of 4096; 10 standard deviations are 320
    EXPECT_LT(kept, a.size() * 6 / 10);
  }
  // The module in training mode draws from the same generator.
  nn::Dropout d(0.5);
  std::vector<double> functional = dropped(7, device());
  manual_seed(7);
  EXPECT_EQ(values(d(Tensor(ones({64, 64}, device()) * 2))), functional);
}

TEST(NnDropoutSeed, DropoutFusesWithItsNeighbours) {
  manual_seed(9);
  Tensor x = rand({32, 48}, device());
  sync();
  Tensor y = dropout(x * 2 + 1, 0.3, true) * 3 - x;
  PlanStats stats = debug::plan_stats({y});
  // The draw is a kernel of its own (a generator); its comparison, the scaling and the
  // arithmetic around it are one fused group, and the draw is the only full-size value: no
  // bool mask, no cast of it.
  EXPECT_EQ(stats.kernels, 2) << debug::plan_text({y});
  EXPECT_EQ(stats.fused_groups, 1) << debug::plan_text({y});
  EXPECT_EQ(stats.intermediate_bytes, 32 * 48 * 4) << debug::plan_text({y});
}

}  // namespace
}  // namespace lt::test

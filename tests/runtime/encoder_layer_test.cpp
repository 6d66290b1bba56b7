// A transformer encoder layer (W6's shape, smaller) as one step: the same bits at any thread
// count, and the plan's bits are the reference executor's. Self-attention projects query, key
// and value with one packed product; with distinct handles of the same values it takes three,
// and the two agree within rounding.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/nn.hpp>

#include "plan_oracle.hpp"

namespace lt {
namespace {

struct Layer {
  int seeded = (manual_seed(3), 0);  // before the layer's initialisation draws
  nn::TransformerEncoderLayer layer{32, 4, {.dim_feedforward = 64, .dropout = 0.0, .batch_first = true}};
  Tensor x;
  Layer() {
    layer.eval();
    layer.to(device());
    x = randn({3, 20, 32}, device());
    sync();
  }
};

std::vector<float> run_at(int threads, Layer& l) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  std::vector<float> out;
  arena.execute([&] {
    no_grad guard;
    out = l.layer(l.x).to_vector<float>();
  });
  return out;
}

TEST(EncoderLayer, SameBitsAtEveryThreadCount) {
  Layer l;
  std::vector<float> one = run_at(1, l);
  for (int threads : {2, 3, 8}) {
    std::vector<float> many = run_at(threads, l);
    ASSERT_EQ(many.size(), one.size());
    EXPECT_EQ(0, std::memcmp(many.data(), one.data(), one.size() * sizeof(float))) << threads << " threads";
  }
}

TEST(EncoderLayer, PlanMatchesReference) {
  Layer l;
  no_grad guard;
  Tensor y = l.layer(l.x);
  oracle::expect_plan_matches_reference({y}, "encoder layer");
  sync();  // left running at exit on purpose: the exit must wait for it on the worker
}

TEST(EncoderLayer, PackedProjectionAgreesWithSeparateOnes) {
  Layer l;
  no_grad guard;
  Tensor packed = l.layer.self_attn(l.x, l.x, l.x, {}, false).first;
  Tensor k = l.x * 1.0f, v = l.x * 1.0f;  // the same values in other handles: three products
  Tensor separate = l.layer.self_attn(l.x, k, v, {}, false).first;
  std::vector<float> a = packed.to_vector<float>(), b = separate.to_vector<float>();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5f) << i;
}

}  // namespace
}  // namespace lt

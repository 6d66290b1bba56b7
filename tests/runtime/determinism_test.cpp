// Results do not depend on the number of threads: kernels split work into fixed blocks and
// reduce in a fixed order. Each workload runs at 1, 2, 3, 8 and 16 threads (a task arena of
// that size, with the global limit raised to match) and must give the same bits.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

/// The bytes of every result of `workload`, run in an arena of `threads` threads.
std::vector<std::vector<std::byte>> run_with_threads(int threads, const std::function<std::vector<Tensor>()>& workload) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  std::vector<std::vector<std::byte>> bytes;
  arena.execute([&] {
    manual_seed(7);
    std::vector<Tensor> results = workload();
    sync();
    for (const Tensor& t : results) {
      Tensor c = t.cpu();
      const View& v = c.impl().data.view;
      ASSERT_TRUE(v.contiguous());
      bytes.emplace_back(v.data, v.data + v.numel() * static_cast<std::int64_t>(itemsize(v.dtype)));
    }
  });
  return bytes;
}

void expect_same_bits_for_every_thread_count(const std::string& name, const std::function<std::vector<Tensor>()>& workload) {
  std::vector<std::vector<std::byte>> one = run_with_threads(1, workload);
  for (int threads : {2, 3, 8, 16}) {
    std::vector<std::vector<std::byte>> many = run_with_threads(threads, workload);
    ASSERT_EQ(many.size(), one.size());
    for (std::size_t k = 0; k < one.size(); ++k)
      EXPECT_TRUE(many[k] == one[k]) << name << ": result " << k << " differs at " << threads << " threads";
  }
}

TEST(Determinism, W1) {
  expect_same_bits_for_every_thread_count("W1", [] {
    const std::int64_t n = 1 << 20;
    Tensor a = rand({n}, device()) * 2 - 1, b = rand({n}, device()) * 2 - 1, c = rand({n}, device()) * 2 - 1;
    Tensor ab = a * b, s = ab + c, m = maximum(s, 0.0), h = m * 0.5;
    Tensor op_by_op = h - b;
    Tensor expression = maximum(a * b + c, 0.0f) * 0.5f - b;
    return std::vector<Tensor>{op_by_op, expression, sum(op_by_op)};
  });
}

// bf16 inputs and results: each op in f32 between casts, fused into the row loop.
TEST(Determinism, W1Bf16) {
  expect_same_bits_for_every_thread_count("W1 in bf16", [] {
    const std::int64_t n = 1 << 20;
    Tensor a = rand({n}, device(), bf16) * 2 - 1, b = rand({n}, device(), bf16) * 2 - 1, c = rand({n}, device(), bf16) * 2 - 1;
    Tensor ab = a * b, s = ab + c, m = maximum(s, 0.0), h = m * 0.5;
    Tensor out = h - b;
    return std::vector<Tensor>{out, sum(out), softmax(out.reshape({1024, 1024}), 1)};
  });
}

TEST(Determinism, W2Softmax) {
  expect_same_bits_for_every_thread_count("W2", [] {
    Tensor x = randn({1024, 1024}, device());
    Tensor m = amax(x, 1, true);
    Tensor e = exp(x - m);
    Tensor s = sum(e, 1, true);
    Tensor y = e / s;
    return std::vector<Tensor>{y, softmax(x, 1), sum(x)};
  });
}

TEST(Determinism, W3Mlp) {
  expect_same_bits_for_every_thread_count("W3", [] {
    Tensor x = randn({64, 784}, device());
    Tensor w1 = randn({1024, 784}, device()) * 0.03f, b1 = randn({1024}, device());
    Tensor w2 = randn({1024, 1024}, device()) * 0.03f, b2 = randn({1024}, device());
    Tensor w3 = randn({10, 1024}, device()) * 0.03f, b3 = randn({10}, device());
    Tensor h1 = relu(linear(x, w1, b1));
    Tensor h2 = relu(linear(h1, w2, b2));
    return std::vector<Tensor>{log_softmax(linear(h2, w3, b3), 1)};
  });
}

TEST(Determinism, ProductsWithEpilogues) {
  // Products cut into tiles both ways, with ragged edges, each tile running its epilogue on
  // whichever thread computed it.
  expect_same_bits_for_every_thread_count("epilogues", [] {
    Tensor x = randn({300, 257}, device()), w = randn({520, 257}, device()), b = randn({520}, device());
    Tensor r = randn({300, 520}, device()), a = randn({4, 129, 70}, device()), c = randn({70, 130}, device());
    Tensor mm = x.matmul(w.t());
    Tensor y = gelu(mm + b) * r;
    Tensor batched = relu(a.matmul(c) - 0.5f);
    return std::vector<Tensor>{y, batched, mm};
  });
}

TEST(Determinism, TrainingLikeStep) {
  // Forward, a loss, hand-written gradients of a linear layer and an SGD update.
  expect_same_bits_for_every_thread_count("training-like", [] {
    Tensor x = randn({256, 128}, device()), target = randn({256, 32}, device());
    Tensor w = randn({32, 128}, device()) * 0.1f, b = zeros({32}, device());
    Tensor y = linear(x, w, b);
    Tensor diff = y - target;
    Tensor loss = mean(diff * diff);
    Tensor grad_y = diff * (2.0 / diff.numel());
    Tensor grad_w = matmul(grad_y.t(), x), grad_b = sum(grad_y, 0);
    Tensor new_w = w - grad_w * 0.01f, new_b = b - grad_b * 0.01f;
    return std::vector<Tensor>{loss, new_w, new_b};
  });
}

}  // namespace
}  // namespace lt

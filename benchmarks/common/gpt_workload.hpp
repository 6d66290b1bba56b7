#pragma once
// The GPT training step that bench_gpt and bench_torch_gpt time: the sizes and hyper-parameters
// of examples/gpt.cpp's default run, the tokens of a batch and the multiply-adds of a step, in
// one place for both programs (C++17: the LibTorch peer builds with it).
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace bench::gpt {

/// examples/gpt.cpp's defaults (GptConfig and its Options).
inline constexpr std::int64_t vocab = 256, context = 128, d_model = 256, heads = 4, layers = 4, batch = 16;
inline constexpr double dropout = 0.1, lr = 1e-3, beta2 = 0.99, weight_decay = 0.1, clip = 1.0;
/// The schedule's warm-up, and a run long enough that the rate never decays to 0 while timed.
inline constexpr long warmup = 20, total_steps = 100000;

/// The rate factor of step t: Hugging Face's linear schedule with warm-up.
inline double schedule_factor(long t) {
  if (t < warmup) return static_cast<double>(t) / static_cast<double>(warmup);
  double left = static_cast<double>(total_steps - t) / static_cast<double>(total_steps - warmup);
  return left > 0 ? left : 0.0;
}

/// A batch of windows over one random byte stream: x [batch, context] and y, its next bytes,
/// row-major. std::mt19937_64 is specified bit for bit, so both programs train on the same
/// bytes.
struct Tokens {
  std::vector<std::int64_t> x, y;
};
inline Tokens tokens(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> stream(static_cast<std::size_t>(batch * (context + 1)));
  for (std::int64_t& b : stream) b = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(vocab));
  Tokens t;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t i = 0; i < context; ++i) {
      t.x.push_back(stream[static_cast<std::size_t>(n * (context + 1) + i)]);
      t.y.push_back(stream[static_cast<std::size_t>(n * (context + 1) + i + 1)]);
    }
  return t;
}

/// The parameters of the model: token and position tables, per block two layer norms, the
/// packed QKV and output projections, the MLP pair (all with biases), a final norm and the head.
inline std::int64_t parameters() {
  const std::int64_t d = d_model, norm = 2 * d;
  const std::int64_t block = 2 * norm + (3 * d * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d);
  return vocab * d + context * d + layers * block + norm + (d * vocab + vocab);
}

/// GFLOP of a step's products: the forward's (projections, scores and weighted sums over all
/// [T, T] pairs, the MLP, the head) times 3, the backward taking two products per forward one.
inline double gflop() {
  const double rows = static_cast<double>(batch * context), d = static_cast<double>(d_model);
  const double attention = 2.0 * 2.0 * static_cast<double>(batch) * context * context * d;
  const double block = 2.0 * rows * (3 * d * d + d * d + 4 * d * d + 4 * d * d) + attention;
  const double forward = static_cast<double>(layers) * block + 2.0 * rows * d * static_cast<double>(vocab);
  return 3.0 * forward / 1e9;
}

/// A first step's loss far from ln(vocab) means the model or the data is not what it claims.
inline bool plausible_first_loss(double loss) { return std::isfinite(loss) && std::abs(loss - std::log(double(vocab))) < 1.0; }

}  // namespace bench::gpt

// The GPT training step of bench_gpt with LibTorch eager: examples/gpt_model.hpp's model written
// with torch::nn modules (token embedding plus a learned position table, 4 pre-norm blocks of
// causal multi-head attention and a GELU MLP, dropout 0.1, a final layer norm, an untied head
// with bias), the same random batch (common/gpt_workload.hpp), cross entropy, backward,
// clip_grad_norm_ to 1, AdamW with decay on matrices only, the linear warm-up schedule. ms per
// step at 2 and 1 threads, and at 1 thread in CPU time.
//
//   bench_torch_gpt [--quick]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/gpt_workload.hpp"
#include "common/timing.hpp"

namespace g = bench::gpt;

namespace {

// x + attention(ln1(x)), then x + mlp(ln2(x)), as GptBlock.
struct BlockImpl : torch::nn::Module {
  torch::nn::LayerNorm ln1{torch::nn::LayerNormOptions({g::d_model})}, ln2{torch::nn::LayerNormOptions({g::d_model})};
  torch::nn::MultiheadAttention attn{torch::nn::MultiheadAttentionOptions(g::d_model, g::heads).dropout(g::dropout)};
  torch::nn::Linear fc{g::d_model, 4 * g::d_model}, proj{4 * g::d_model, g::d_model};
  torch::nn::Dropout drop{g::dropout};
  BlockImpl() {
    register_module("ln1", ln1);
    register_module("attn", attn);
    register_module("ln2", ln2);
    register_module("fc", fc);
    register_module("proj", proj);
    register_module("drop", drop);
  }
  // x [N, T, d]; mask [T, T], -inf above the diagonal. LibTorch's C++ attention takes [T, N, d].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) {
    torch::Tensor h = ln1(x).transpose(0, 1);
    torch::Tensor a = std::get<0>(attn->forward(h, h, h, torch::Tensor(), /*need_weights=*/false, mask)).transpose(0, 1);
    torch::Tensor y = x + drop(a);
    return y + drop(proj(torch::gelu(fc(ln2(y)))));
  }
};
TORCH_MODULE(Block);

struct GptImpl : torch::nn::Module {
  torch::nn::Embedding tok{g::vocab, g::d_model};
  torch::Tensor pos;  // lazytensor's PositionalEmbedding: N(0, 0.02^2)
  torch::nn::Dropout drop{g::dropout};
  std::vector<Block> blocks;
  torch::nn::LayerNorm ln_f{torch::nn::LayerNormOptions({g::d_model})};
  torch::nn::Linear head{g::d_model, g::vocab};
  GptImpl() {
    register_module("tok", tok);
    pos = register_parameter("pos", torch::randn({g::context, g::d_model}) * 0.02);
    register_module("drop", drop);
    for (std::int64_t i = 0; i < g::layers; ++i) blocks.push_back(register_module("h" + std::to_string(i), Block()));
    register_module("ln_f", ln_f);
    register_module("head", head);
  }
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) {
    torch::Tensor x = drop(tok(ids) + pos.slice(0, 0, ids.size(1)));
    for (Block& b : blocks) x = b(x, mask);
    return head(ln_f(x));
  }
};
TORCH_MODULE(Gpt);

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 3 : 11;
  torch::manual_seed(0);
  Gpt model;
  model->train();
  std::int64_t count = 0;
  for (const torch::Tensor& p : model->parameters()) count += p.numel();
  if (count != g::parameters()) {
    std::fprintf(stderr, "bench_torch_gpt: %lld parameters, the workload counts %lld\n", static_cast<long long>(count),
                 static_cast<long long>(g::parameters()));
    return 1;
  }
  // Decay on matrices (projections, embeddings, the position table), none on biases and norms.
  std::vector<torch::Tensor> decay, no_decay;
  for (const torch::Tensor& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  auto options = torch::optim::AdamWOptions(g::lr).betas({0.9, g::beta2});
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(options).weight_decay(g::weight_decay)));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(options).weight_decay(0.0)));
  torch::optim::AdamW optimizer(groups, options);
  // The schedule as LambdaLR sets it, begun one step in as bench_gpt's.
  long t = 0;
  auto schedule_step = [&] {
    ++t;
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(g::lr * g::schedule_factor(t));
  };
  schedule_step();
  const g::Tokens tokens = g::tokens(1);
  torch::Tensor x = torch::tensor(tokens.x, torch::kLong).reshape({g::batch, g::context});
  torch::Tensor y = torch::tensor(tokens.y, torch::kLong).reshape({g::batch, g::context});
  torch::Tensor mask = torch::full({g::context, g::context}, -std::numeric_limits<float>::infinity()).triu(1);
  const std::vector<torch::Tensor> params = model->parameters();
  auto step = [&] {
    optimizer.zero_grad();
    torch::Tensor logits = model->forward(x, mask);
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits.reshape({-1, g::vocab}), y.reshape({-1}));
    loss.backward();
    torch::nn::utils::clip_grad_norm_(params, g::clip);
    optimizer.step();
    schedule_step();
    bench::keep(loss);
    return loss;
  };
  const double first = step().item<double>();
  std::printf("GPT training step, LibTorch %s eager: %lld layers, d_model %lld, %lld heads, context %lld, batch %lld, "
              "%lld parameters, %.2f GFLOP of products per step (median of %d steps after warm-up)\n",
              TORCH_VERSION, static_cast<long long>(g::layers), static_cast<long long>(g::d_model),
              static_cast<long long>(g::heads), static_cast<long long>(g::context), static_cast<long long>(g::batch),
              static_cast<long long>(count), g::gflop(), reps);
  std::printf("  first step's loss %.4f (ln %lld = %.4f)\n", first, static_cast<long long>(g::vocab),
              std::log(static_cast<double>(g::vocab)));
  if (!g::plausible_first_loss(first)) {
    std::fprintf(stderr, "bench_torch_gpt: the first step's loss is not near ln(vocab)\n");
    return 1;
  }
  for (int threads : {2, 1}) {
    at::set_num_threads(threads);
    double s = bench::median_seconds(step, reps, 2);
    std::printf("  %d thread%s (at::get_num_threads() = %d): %.1f ms per step, %.1f GFLOP/s\n", threads,
                threads > 1 ? "s" : "", at::get_num_threads(), 1e3 * s, g::gflop() / s);
  }
  std::printf("  1 thread, CPU time: %.1f ms per step\n", 1e3 * bench::median_process_cpu_seconds(step, reps));
}

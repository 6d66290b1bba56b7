// W6 with LibTorch eager: torch::nn::TransformerEncoderLayer(256, 4) with dim_feedforward 1024,
// dropout 0, relu, post-norm, in eval under NoGradGuard, input [8, 128, 256] batch first (the C++
// module takes [S, N, E]: the input is made in that layout, outside the timing). Beside it, in
// the same run and timed in turns, the layer's products as plain cblas_sgemm calls (the bound
// that bench_w6 prints too) and, where LibTorch has it, the fused fast path that PyTorch's
// Python module takes in eval (at::_transformer_encoder_layer_fwd).
//
//   bench_torch_w6 [--quick]
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include <torch/torch.h>

#include "common/limits.hpp"
#include "common/timing.hpp"
#include "common/turns.hpp"
#include "common/w6_products.hpp"

namespace {
std::vector<float> values(const torch::Tensor& t) {
  torch::Tensor c = t.contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}
}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int rounds = quick ? 2 : 7, calls = quick ? 5 : 15;
  constexpr int64_t n = 8, s = 128, e = 256, heads = 4, ff = 1024;
  const double gflop = 2.0 * (n * s * e * 3.0 * e + 2.0 * n * s * s * e + n * s * e * e + 2.0 * n * s * e * ff) / 1e9;
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  torch::nn::TransformerEncoderLayer layer(torch::nn::TransformerEncoderLayerOptions(e, heads).dim_feedforward(ff).dropout(0.0));
  layer->eval();
  torch::Tensor x = torch::randn({n, s, e});
  torch::Tensor x_sne = x.transpose(0, 1).contiguous();
  auto module_call = [&] {
    torch::Tensor y = layer(x_sne);
    bench::keep(y);
  };
  auto& attn = layer->self_attn;
  // The fused eval path of torch.nn.TransformerEncoderLayer (Python), batch first.
  auto fast_call = [&] {
    torch::Tensor y = at::_transformer_encoder_layer_fwd(
        x, e, heads, attn->in_proj_weight, attn->in_proj_bias, attn->out_proj->weight, attn->out_proj->bias,
        /*use_gelu=*/false, /*norm_first=*/false, 1e-5, layer->norm1->weight, layer->norm1->bias,
        layer->norm2->weight, layer->norm2->bias, layer->linear1->weight, layer->linear1->bias,
        layer->linear2->weight, layer->linear2->bias, c10::nullopt, c10::nullopt);
    bench::keep(y);
  };
  {  // both paths compute the same layer
    torch::Tensor a = layer(x_sne).transpose(0, 1), b;
    fast_call();
    b = at::_transformer_encoder_layer_fwd(x, e, heads, attn->in_proj_weight, attn->in_proj_bias, attn->out_proj->weight,
                                           attn->out_proj->bias, false, false, 1e-5, layer->norm1->weight,
                                           layer->norm1->bias, layer->norm2->weight, layer->norm2->bias,
                                           layer->linear1->weight, layer->linear1->bias, layer->linear2->weight,
                                           layer->linear2->bias, c10::nullopt, c10::nullopt);
    std::printf("W6 LibTorch %s eager, TransformerEncoderLayer(256, 4, 1024), eval, [8, 128, 256] (medians of %d calls, "
                "timed in turns with the bound; module and fast path differ by at most %.2g)\n",
                TORCH_VERSION, rounds * calls, (a - b).abs().max().item<double>());
  }
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
  std::printf("  CBLAS kernels: %s\n", *bench::cblas_corename() != 0 ? bench::cblas_corename() : "not OpenBLAS");
  bench::W6Products products(values(x), values(attn->in_proj_weight), values(attn->out_proj->weight),
                             values(layer->linear1->weight), values(layer->linear2->weight));
#endif
  for (int threads : {2, 1}) {
    at::set_num_threads(threads);
    std::vector<std::function<void()>> fs = {module_call, fast_call};
    std::vector<int> runs = {calls, calls};
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
    fs.push_back([&] {
      if (bench::cblas_threads_settable()) openblas_set_num_threads(threads);
      products.run();
      bench::keep(products.out);
    });
    runs.push_back(calls);
#endif
    std::vector<double> t = bench::medians_in_turns(fs, runs, rounds);
    std::printf(" %d thread%s (at::get_num_threads() = %d)\n", threads, threads > 1 ? "s" : "", at::get_num_threads());
    double bound = t.size() > 2 ? t[2] : 0;
    if (bound > 0) bench::print_row("products, cblas_sgemm", 1e3 * bound, "ms", 1.0, gflop / bound, "GFLOP/s");
    bench::print_row("torch module W6 call", 1e3 * t[0], "ms", bound > 0 ? t[0] / bound : 0, gflop / t[0], "GFLOP/s");
    bench::print_row("torch fast path W6 call", 1e3 * t[1], "ms", bound > 0 ? t[1] / bound : 0, gflop / t[1], "GFLOP/s");
  }
  std::printf("  (ratio: time / the products' time)\n");
}

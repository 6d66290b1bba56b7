// A byte-level GPT trained on Debian's fortunes on the lazy device, as a Hugging Face Trainer
// would: AdamW with decay on matrices only, a linear warm-up and decay of the rate, gradients
// clipped to norm 1, validation loss and perplexity per epoch, a checkpoint per epoch, then
// text sampled greedily and with a temperature. The run compiles three graphs: the training
// step, the evaluation and generation (a fixed window, so one plan serves every byte).
//
//   gpt [--epochs N] [--steps N] [--batch N] [--context N] [--layers N] [--d-model N]
//       [--heads N] [--dropout P] [--lr R] [--warmup N] [--eval-batches N] [--sample N]
//       [--temperature T] [--seed S] [--dir DIR] [--save DIR] [--init FILE]
//
// An epoch is --steps steps of --batch windows drawn at random (seeded) from the training
// fortunes; validation runs --eval-batches batches of windows spread over the validation ones.
// benchmarks/peers/gpt_torch.py trains the same model on the same windows in PyTorch; with
// --init FILE both start from the same weights: the first run to name FILE writes its initial
// state dict there, later runs (of either) load it.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>

#include <lazytensor/io.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>

#include "gpt_data.hpp"
#include "gpt_model.hpp"

namespace {

struct Options {
  GptConfig model;
  int epochs = 3;
  long steps = 60;  // per epoch: the default run, 180 steps, takes a few minutes on two cores
  std::int64_t batch = 16;
  double lr = 1e-3, weight_decay = 0.1;
  long warmup = 20;
  std::int64_t eval_batches = 8;
  int sample = 240;  // bytes of each sample
  double temperature = 0.8;
  std::uint64_t seed = 1;
  std::string dir = fortunes_directory, save_dir, init_file;

  static std::optional<Options> parse(int argc, char** argv) {
    Options o;
    auto number = [&](int& i) { return std::strtod(argv[++i], nullptr); };
    for (int i = 1; i < argc; ++i) {
      const char* a = argv[i];
      bool value = i + 1 < argc;
      if (value && !std::strcmp(a, "--epochs")) o.epochs = static_cast<int>(number(i));
      else if (value && !std::strcmp(a, "--steps")) o.steps = static_cast<long>(number(i));
      else if (value && !std::strcmp(a, "--batch")) o.batch = static_cast<std::int64_t>(number(i));
      else if (value && !std::strcmp(a, "--context")) o.model.context = static_cast<std::int64_t>(number(i));
      else if (value && !std::strcmp(a, "--layers")) o.model.layers = static_cast<std::int64_t>(number(i));
      else if (value && !std::strcmp(a, "--d-model")) o.model.d_model = static_cast<std::int64_t>(number(i));
      else if (value && !std::strcmp(a, "--heads")) o.model.heads = static_cast<std::int64_t>(number(i));
      else if (value && !std::strcmp(a, "--dropout")) o.model.dropout = number(i);
      else if (value && !std::strcmp(a, "--lr")) o.lr = number(i);
      else if (value && !std::strcmp(a, "--warmup")) o.warmup = static_cast<long>(number(i));
      else if (value && !std::strcmp(a, "--eval-batches")) o.eval_batches = static_cast<std::int64_t>(number(i));
      else if (value && !std::strcmp(a, "--sample")) o.sample = static_cast<int>(number(i));
      else if (value && !std::strcmp(a, "--temperature")) o.temperature = number(i);
      else if (value && !std::strcmp(a, "--seed")) o.seed = static_cast<std::uint64_t>(number(i));
      else if (value && !std::strcmp(a, "--dir")) o.dir = argv[++i];
      else if (value && !std::strcmp(a, "--save")) o.save_dir = argv[++i];
      else if (value && !std::strcmp(a, "--init")) o.init_file = argv[++i];
      else return usage(argv[0]);
    }
    if (o.epochs < 1 || o.steps < 1 || o.batch < 1 || o.model.context < 2 || o.eval_batches < 1 || o.sample < 0 ||
        o.warmup < 0 || !(o.temperature > 0) || !(o.lr > 0))
      return usage(argv[0]);
    return o;
  }
  static std::optional<Options> usage(const char* self) {
    std::cerr << "usage: " << self
              << " [--epochs N] [--steps N] [--batch N] [--context N] [--layers N] [--d-model N] [--heads N]\n"
                 "       [--dropout P] [--lr R] [--warmup N] [--eval-batches N] [--sample N] [--temperature T]\n"
                 "       [--seed S] [--dir DIR] [--save DIR] [--init FILE]\n";
    return std::nullopt;
  }
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

lt::Tensor ids(const std::vector<std::int64_t>& values, std::int64_t rows, std::int64_t cols, lt::Device dev) {
  return lt::from_vector(values, {rows, cols}).to(dev);
}

/// The mean validation loss over the evaluation windows: one graph, run per batch.
double validation_loss(Gpt& model, const std::string& text, const Options& o, lt::Device dev) {
  model.eval();
  lt::no_grad guard;
  const std::int64_t t = o.model.context;
  std::vector<std::uint64_t> all = even_starts(text.size(), o.eval_batches * o.batch, t);
  std::vector<std::int64_t> x, y;
  std::vector<lt::Tensor> losses;
  for (std::int64_t b = 0; b < o.eval_batches; ++b) {
    std::vector<std::uint64_t> starts(all.begin() + b * o.batch, all.begin() + (b + 1) * o.batch);
    windows_at(text, starts, t, x, y);
    losses.push_back(gpt_loss(model, ids(x, o.batch, t, dev), ids(y, o.batch, t, dev)));
    lt::sync();
  }
  double sum = 0;
  for (const lt::Tensor& l : losses) sum += l.item<float>();
  model.train();
  return sum / static_cast<double>(losses.size());
}

/// `length` bytes after `prompt`: each the argmax of the logits (temperature 0) or drawn from
/// softmax(logits / temperature). The window keeps its shape, [1, context], zeros after the
/// text (the causal mask hides them), and slides once the text fills it.
std::string generate(Gpt& model, const std::string& prompt, int length, double temperature, std::mt19937_64& rng,
                     lt::Device dev) {
  model.eval();
  lt::no_grad guard;
  const std::int64_t t = model.config.context;
  std::string text = prompt;
  for (int n = 0; n < length; ++n) {
    const std::size_t used = std::min(text.size(), static_cast<std::size_t>(t));
    std::vector<std::int64_t> window(static_cast<std::size_t>(t), 0);
    for (std::size_t i = 0; i < used; ++i) window[i] = static_cast<unsigned char>(text[text.size() - used + i]);
    lt::Tensor at = lt::from_vector(std::vector<std::int64_t>{static_cast<std::int64_t>(used) - 1}, {1}).to(dev);
    std::vector<float> logits = gpt_next_logits(model, ids(window, 1, t, dev), at).to_vector<float>();
    std::size_t next = 0;
    if (temperature <= 0) {
      next = static_cast<std::size_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    } else {
      const float top = *std::max_element(logits.begin(), logits.end());
      std::vector<double> p;
      for (float l : logits) p.push_back(std::exp((l - top) / temperature));
      next = std::discrete_distribution<std::size_t>(p.begin(), p.end())(rng);
    }
    text.push_back(static_cast<char>(next));
  }
  model.train();
  return text;
}

/// Bytes a terminal shows as they are: printable ASCII, newlines and tabs; others as '?'.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out.push_back((c >= 32 && c < 127) || c == '\n' || c == '\t' ? static_cast<char>(c) : '?');
  return out;
}

int run(const Options& o) {
  const GptText text = read_fortunes(o.dir);
  std::printf("fortunes: %zu files, %zu fortunes; %zu bytes for training, %zu for validation\n", text.files,
              text.fortunes, text.train.size(), text.validation.size());
  lt::manual_seed(o.seed);
  const lt::Device dev = lt::device();
  Gpt model(o.model);
  model.to(dev);
  if (!o.init_file.empty()) {
    const bool exists = std::filesystem::exists(o.init_file);
    if (exists) lt::load_into(model, o.init_file);
    else lt::save(model.state_dict(), o.init_file, {{"format", "pt"}});
    std::printf("initial weights %s %s\n", exists ? "loaded from" : "written to", o.init_file.c_str());
  }
  std::int64_t count = 0;
  for (const lt::Tensor& p : model.parameters()) count += p.numel();
  std::printf("GPT: %lld layers, d_model %lld, %lld heads, context %lld: %.2fM parameters\n",
              static_cast<long long>(o.model.layers), static_cast<long long>(o.model.d_model),
              static_cast<long long>(o.model.heads), static_cast<long long>(o.model.context), 1e-6 * double(count));
  lt::optim::AdamW optimizer(model.param_groups(o.weight_decay), lt::optim::AdamOptions{.lr = o.lr, .beta2 = 0.99});
  // Hugging Face's schedule, begun one step in: its step 0 has rate 0, a step that changes
  // nothing (and, its rate folded as a constant, would compile a graph of its own).
  const long total = o.epochs * o.steps;
  auto schedule = lt::optim::get_linear_schedule_with_warmup(optimizer, o.warmup, total + 1);
  schedule.step();
  const lt::Checkpoint run{.model = &model, .optimizer = &optimizer, .scheduler = &schedule};
  SplitMix64 rng{o.seed};
  std::vector<std::int64_t> x, y;
  const std::int64_t t = o.model.context;
  for (int e = 1; e <= o.epochs; ++e) {
    auto start = Clock::now();
    auto draw = [&](long done, float loss) {
      int filled = static_cast<int>(30 * done / o.steps);
      std::fprintf(stderr, "\repoch %d [%-30s] %ld/%ld  %.2f steps/s  loss %.4f  lr %.2e", e,
                   std::string(static_cast<std::size_t>(filled), '=').c_str(), done, o.steps,
                   static_cast<double>(done) / seconds_since(start), static_cast<double>(loss), optimizer.lr());
    };
    lt::Tensor loss;
    for (long s = 1; s <= o.steps; ++s) {
      windows_at(text.train, random_starts(rng, text.train.size(), o.batch, t), t, x, y);
      loss = gpt_train_step(model, optimizer, schedule, ids(x, o.batch, t, dev), ids(y, o.batch, t, dev));
      // The bar is drawn once the step has run: no read waits inside the loop.
      if (s % 10 == 0) lt::add_step_closure([&draw, loss, s] { draw(s, loss.item<float>()); }, dev);
      lt::sync();
    }
    lt::wait_device_ops();
    const double seconds = seconds_since(start);
    draw(o.steps, loss.item<float>());
    std::fprintf(stderr, "\n");
    const double val = validation_loss(model, text.validation, o, dev);
    std::printf("epoch %d: validation loss %.4f, perplexity %.2f, %.0f ms per training step\n", e, val, std::exp(val),
                1e3 * seconds / static_cast<double>(o.steps));
    std::fflush(stdout);  // the epoch's line before the next epoch's bar, also into a file
    if (!o.save_dir.empty()) run.save(o.save_dir + "/gpt-epoch-" + std::to_string(e) + ".safetensors");
  }
  std::mt19937_64 sampler(o.seed);
  const std::string prompt = "The ";
  std::printf("\n--- greedy ---\n%s\n", printable(generate(model, prompt, o.sample, 0.0, sampler, dev)).c_str());
  std::printf("\n--- temperature %.2f ---\n%s\n", o.temperature,
              printable(generate(model, prompt, o.sample, o.temperature, sampler, dev)).c_str());
  std::printf("\ngraphs compiled: %lld (training step, evaluation, generation)\n",
              static_cast<long long>(lt::metrics::counter("UncachedCompile")));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> options = Options::parse(argc, argv);
  if (!options) return 2;
  try {
    return run(*options);
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}

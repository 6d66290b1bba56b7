// Optimizer and schedule state in PyTorch's layout, the loader's position, and checkpoints
// that refuse what does not fit and then leave every part as it was.
#include <lazytensor/data.hpp>

#include "io_test_support.hpp"

namespace lt::io::testing {
namespace {

using optim::Hyperparameter;

/// Two steps of `opt` on a 3-element and a [2, 2] parameter with fixed gradients.
void two_steps(optim::Optimizer& opt) {
  for (int s = 0; s < 2; ++s) {
    for (Tensor q : opt.parameters()) {  // a handle: it shares the parameter's state
      q.mutable_grad() = full(q.shape(), 0.25 * (s + 1), q.device(), q.dtype());
    }
    opt.step();
  }
}

std::vector<Tensor> fresh_parameters() {
  return {from_vector(std::vector<float>{1, 2, 3}, {3}).requires_grad_(),
          from_vector(std::vector<float>{1, -1, 2, -2}, {2, 2}).requires_grad_()};
}

TEST(OptimizerState, SgdUsesPyTorchNames) {
  optim::SGD opt(fresh_parameters(), {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01});
  two_steps(opt);
  optim::OptimizerState s = opt.state_dict();
  ASSERT_EQ(s.param_groups.size(), 1u);
  EXPECT_EQ(s.param_groups[0].params, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(s.param_groups[0].options.at("lr"), Hyperparameter(0.1));
  EXPECT_EQ(s.param_groups[0].options.at("momentum"), Hyperparameter(0.9));
  EXPECT_EQ(s.param_groups[0].options.at("nesterov"), Hyperparameter(false));
  ASSERT_EQ(s.state.size(), 2u);
  EXPECT_EQ(s.state.at(1).at("momentum_buffer").shape(), Shape({2, 2}));
}

TEST(OptimizerState, AdamUsesPyTorchNamesAndRestoresTheStep) {
  optim::Adam opt(fresh_parameters(), {.lr = 0.01, .beta1 = 0.8});
  two_steps(opt);
  optim::OptimizerState s = opt.state_dict();
  EXPECT_EQ(s.param_groups[0].options.at("betas"), Hyperparameter(std::vector<double>{0.8, 0.999}));
  EXPECT_EQ(s.state.at(0).at("step").dtype(), f32);
  EXPECT_EQ(s.state.at(0).at("step").item<float>(), 2.0f);

  std::vector<Tensor> params = fresh_parameters();
  optim::Adam other(params, {});
  other.load_state_dict(s);
  EXPECT_EQ(other.steps(), 2);
  EXPECT_EQ(other.options.beta1, 0.8);
  EXPECT_EQ(other.lr(), 0.01);
  EXPECT_EQ(raw_bytes(other.state_dict().state.at(1).at("exp_avg_sq")), raw_bytes(s.state.at(1).at("exp_avg_sq")));
}

TEST(OptimizerState, RefusesStateThatDoesNotFitAndChangesNothing) {
  optim::SGD source(fresh_parameters(), {.lr = 0.1, .momentum = 0.9});
  two_steps(source);
  optim::SGD target(fresh_parameters(), {.lr = 0.5, .momentum = 0.1});

  auto expect_refused = [&](optim::OptimizerState s, const std::string& fault) {
    try {
      target.load_state_dict(s);
      ADD_FAILURE() << "accepted; expected " << fault;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fault), std::string::npos) << e.what();
    }
    EXPECT_EQ(target.lr(), 0.5);
    EXPECT_EQ(target.options.momentum, 0.1);
    EXPECT_TRUE(target.state_dict().state.empty());
  };
  optim::OptimizerState s = source.state_dict();
  auto bad = s;
  bad.state[1]["momentum_buffer"] = zeros({3});
  expect_refused(bad, "has shape [3], the parameter [2, 2]");
  bad = s;
  bad.state[7] = bad.state[0];
  expect_refused(bad, "state for parameter 7");
  bad = s;
  bad.param_groups[0].options["maximize"] = true;
  expect_refused(bad, "only false is implemented");
  bad = s;
  bad.param_groups[0].options["betas"] = std::vector<double>{0.9, 0.99};
  expect_refused(bad, "unknown key 'betas'");
  bad = s;
  bad.param_groups[0].options["momentum"] = true;
  expect_refused(bad, "must be a number");
  bad = s;
  bad.param_groups[0].params = {1, 0};
  expect_refused(bad, "in order");
  bad = s;
  bad.param_groups.push_back(bad.param_groups[0]);
  expect_refused(bad, "expected 1 param group");
}

TEST(SchedulerState, StepLrAndCosineRoundTrip) {
  optim::SGD opt(fresh_parameters(), {.lr = 0.1});
  optim::StepLR step(opt, 2, 0.5);
  for (int k = 0; k < 5; ++k) step.step();
  optim::SGD opt2(fresh_parameters(), {.lr = 0.1});
  optim::StepLR step2(opt2, 7, 0.9);
  step2.load_state_dict(step.state_dict());
  EXPECT_EQ(step2.last_epoch(), 5);
  step.step();
  step2.step();
  EXPECT_EQ(opt2.lr(), opt.lr());

  optim::CosineAnnealingLR cosine(opt, 10, 0.001);
  cosine.step();
  optim::CosineAnnealingLR cosine2(opt2, 3);
  cosine2.load_state_dict(cosine.state_dict());
  cosine.step();
  cosine2.step();
  EXPECT_EQ(opt2.lr(), opt.lr());
  EXPECT_THROW(cosine2.load_state_dict(step.state_dict()), Error);
}

TEST(LoaderPosition, ResumesAnEpochAtItsBatch) {
  data::TensorDataset dataset(arange(0, 20, 1, cpu, i64));
  data::DataLoader loader(dataset, {.batch_size = 4, .shuffle = true, .seed = 3});
  std::vector<std::vector<std::int64_t>> epoch1;
  loader.set_epoch(1);
  for (auto [x] : loader) epoch1.push_back(x.to_vector<std::int64_t>());
  loader.set_position({1, 3});
  std::vector<std::vector<std::int64_t>> rest;
  for (auto [x] : loader) rest.push_back(x.to_vector<std::int64_t>());
  EXPECT_EQ(rest, std::vector<std::vector<std::int64_t>>(epoch1.begin() + 3, epoch1.end()));
  EXPECT_EQ(loader.epoch(), 2u);
  int batches = 0;
  for (auto [x] : loader) ++batches;  // the next epoch starts at its first batch
  EXPECT_EQ(batches, 5);
}

struct Tiny : nn::Module {
  nn::Linear fc;
  explicit Tiny(int out) : fc(3, out) { LT_REGISTER_MODULES(fc); }
};

TEST(Checkpoint, RefusesAPartThatDoesNotFitAndRestoresNothing) {
  ScratchDir dir;
  manual_seed(2);
  Tiny small(2);
  optim::SGD small_opt(small.parameters(), {.lr = 0.1, .momentum = 0.9});
  two_steps(small_opt);
  Checkpoint{.model = &small, .optimizer = &small_opt}.save(dir / "small.safetensors");

  // A model of the same names and shapes whose optimizer holds other hyper-parameters loads;
  // one whose optimizer state does not fit (Adam's names) is refused after the model would
  // have loaded: the model is rolled back.
  Tiny target(2);
  optim::Adam adam(target.parameters());
  two_steps(adam);
  Bytes weight = raw_bytes(target.fc.weight);
  RandomState rng = default_generator().state();
  try {
    Checkpoint{.model = &target, .optimizer = &adam}.load(dir / "small.safetensors");
    ADD_FAILURE() << "an SGD state loaded into Adam";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(dir / "small.safetensors"), std::string::npos) << what;
    EXPECT_NE(what.find("Adam.load_state_dict"), std::string::npos) << what;
  }
  EXPECT_EQ(raw_bytes(target.fc.weight), weight);
  EXPECT_EQ(adam.steps(), 2);
  EXPECT_EQ(default_generator().state(), rng);

  Tiny wider(4);  // other shapes: refused by the module, nothing changes
  Bytes wide_weight = raw_bytes(wider.fc.weight);
  EXPECT_THROW(Checkpoint{.model = &wider}.load(dir / "small.safetensors"), Error);
  EXPECT_EQ(raw_bytes(wider.fc.weight), wide_weight);
}

TEST(Checkpoint, NamesAMissingPartAndReservedMetadata) {
  ScratchDir dir;
  Tiny model(2);
  Checkpoint{.model = &model, .rng = false}.save(dir / "model_only.safetensors");
  optim::SGD opt(model.parameters());
  try {
    Checkpoint{.model = &model, .optimizer = &opt}.load(dir / "model_only.safetensors");
    ADD_FAILURE() << "loaded a part the file does not hold";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds no optimizer state"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Checkpoint{.model = &model}.save(dir / "x.safetensors", {{"checkpoint.mine", "1"}}), Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "x.safetensors"));
}

TEST(Checkpoint, IsASafetensorsFileWithPyTorchNames) {
  ScratchDir dir;
  Tiny model(2);
  optim::SGD opt(model.parameters(), {.lr = 0.1, .momentum = 0.9});
  two_steps(opt);
  Checkpoint{.model = &model, .optimizer = &opt}.save(dir / "c.safetensors", {{"epoch", "3"}});
  SafetensorsContents file = load_with_metadata(dir / "c.safetensors");
  std::vector<std::string> names;
  for (auto& [name, t] : file.tensors) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"model.fc.bias", "model.fc.weight", "optimizer.state.0.momentum_buffer",
                                             "optimizer.state.1.momentum_buffer"}));
  EXPECT_EQ(file.metadata.at("epoch"), "3");
  EXPECT_NE(file.metadata.at("checkpoint.optimizer").find("\"momentum\":0.9"), std::string::npos);
}

}  // namespace
}  // namespace lt::io::testing

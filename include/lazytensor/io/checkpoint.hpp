#pragma once
// Checkpoints: a whole training run in one safetensors file, to resume it bit for bit. The
// model's state dict and the optimizer's state tensors are the file's tensors ("model.<name>",
// "optimizer.state.<index>.<name>", PyTorch's names); the optimizer's param groups, the
// schedule, the random generator and the loader's position sit in "__metadata__" as JSON
// ("checkpoint.optimizer", "checkpoint.scheduler", "checkpoint.rng", "checkpoint.loader"),
// beside the user's own string metadata. Declared here, defined once per program
// (io/checkpoint_io.hpp).
#include <string>

#include "lazytensor/data/loader_position.hpp"
#include "lazytensor/io/safetensors.hpp"
#include "lazytensor/optim/lr_scheduler.hpp"
#include "lazytensor/optim/optimizer.hpp"

namespace lt {

/// The parts of a run that a checkpoint saves and restores; a null part is left out.
///
///   lt::data::LoaderPosition position{epoch, batch};
///   lt::Checkpoint run{.model = &model, .optimizer = &opt, .scheduler = &schedule, .loader = &position};
///   run.save("run.safetensors", {{"note", "after epoch 3"}});
///   ...
///   lt::Metadata note = run.load("run.safetensors");   // restores all four and the generator
///   train_loader.set_position(position);
struct Checkpoint {
  /// Saved from, and loaded into, this module's state_dict() (keys "model.<name>"); null: left out.
  nn::Module* model = nullptr;
  /// Saved from, and loaded into, this optimizer's state (keys "optimizer.state.<i>.<name>"); null: left out.
  optim::Optimizer* optimizer = nullptr;
  /// The learning-rate schedule's state, kept in the metadata; null: left out.
  optim::LRScheduler* scheduler = nullptr;
  /// Saved from, and loaded into, this position; hand it to DataLoader::set_position.
  data::LoaderPosition* loader = nullptr;
  /// lt::manual_seed's generator (its seed and the place in its stream).
  bool rng = true;

  /// Writes the parts to `path` (atomically, as lt::save), with the user's `metadata`, whose
  /// keys may not start with "checkpoint.". Tensors of a lazy device are computed first.
  void save(const std::string& path, const Metadata& metadata = {}, const SaveOptions& options = {}) const;

  /// Restores every part from `path` and returns the user's metadata. The file must hold each
  /// part this checkpoint names (it may hold more). All or nothing: a bad file or a part that
  /// does not fit raises lt::Error, and then no part has changed.
  Metadata load(const std::string& path) const;
};

}  // namespace lt

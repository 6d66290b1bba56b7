#pragma once
// Checkpoint::save and Checkpoint::load, defined once per program: included by the
// implementation (through io/definitions.hpp), never by a user's file.
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lazytensor/core/random.hpp"
#include "lazytensor/io/checkpoint.hpp"

namespace lt {

namespace io::detail {

using Json = nlohmann::json;

inline constexpr std::string_view reserved_prefix = "checkpoint.";
inline constexpr std::string_view model_prefix = "model.";
inline constexpr std::string_view optimizer_prefix = "optimizer.state.";

inline Json to_json(const optim::Hyperparameters& values, std::string_view where) {
  Json out = Json::object();
  // Not a structured binding: clang before 16 cannot capture one in a lambda.
  for (const auto& entry : values) {
    const auto& key = entry.first;
    std::visit(
        [&]<class V>(const V& v) {
          if constexpr (std::is_same_v<V, std::vector<double>>) {
            for (double x : v) LT_CHECK(std::isfinite(x), where, "[\"", key, "\"] is not finite");
          } else if constexpr (std::is_same_v<V, double>) {
            LT_CHECK(std::isfinite(v), where, "[\"", key, "\"] is not finite");
          }
          out[key] = v;
        },
        entry.second);
  }
  return out;
}

inline optim::Hyperparameters hyperparameters_from(const Json& j, std::string_view where) {
  LT_CHECK(j.is_object(), where, " must be a JSON object");
  optim::Hyperparameters out;
  for (auto& [key, value] : j.items()) {
    if (value.is_boolean()) {
      out[key] = value.get<bool>();
    } else if (value.is_number()) {
      out[key] = value.get<double>();
    } else if (value.is_array()) {
      std::vector<double> numbers;
      for (const Json& x : value) {
        LT_CHECK(x.is_number(), where, "[\"", key, "\"] must hold numbers only");
        numbers.push_back(x.get<double>());
      }
      out[key] = std::move(numbers);
    } else {
      fail(where, "[\"", key, "\"] must be a number, a flag or a list of numbers");
    }
  }
  return out;
}

/// PyTorch's param_groups: each group's hyper-parameters and its "params".
inline Json param_groups_json(const optim::OptimizerState& s) {
  Json groups = Json::array();
  for (const optim::ParamGroup& g : s.param_groups) {
    Json group = to_json(g.options, "optimizer param group");
    group["params"] = g.params;
    groups.push_back(std::move(group));
  }
  return Json{{"param_groups", std::move(groups)}};
}

inline std::vector<optim::ParamGroup> param_groups_from(const Json& j) {
  LT_CHECK(j.is_object() && j.contains("param_groups") && j["param_groups"].is_array(),
           "checkpoint.optimizer must be an object with a list \"param_groups\"");
  std::vector<optim::ParamGroup> groups;
  for (const Json& g : j["param_groups"]) {
    LT_CHECK(g.is_object() && g.contains("params") && g["params"].is_array(),
             "checkpoint.optimizer: each param group must be an object with a list \"params\"");
    optim::ParamGroup group;
    for (const Json& index : g["params"]) {
      LT_CHECK(index.is_number_integer(), "checkpoint.optimizer: \"params\" must hold parameter indices");
      group.params.push_back(index.get<std::int64_t>());
    }
    Json options = g;
    options.erase("params");
    group.options = hyperparameters_from(options, "checkpoint.optimizer param group");
    groups.push_back(std::move(group));
  }
  return groups;
}

inline Json parse_json(const Metadata& metadata, const std::string& key) {
  auto it = metadata.find(key);
  LT_CHECK(it != metadata.end(), "the file has no ", key, " (was the part saved?)");
  try {
    return Json::parse(it->second);
  } catch (const Json::exception& e) {
    fail(key, " is not valid JSON (", e.what(), ")");
  }
}

template <class T>
T unsigned_field(const Json& j, std::string_view key, std::string_view where) {
  LT_CHECK(j.is_object() && j.contains(key) && j[std::string(key)].is_number_unsigned(), where, " needs \"", key,
           "\", a non-negative integer");
  auto v = j[std::string(key)].get<std::uint64_t>();
  LT_CHECK(v <= static_cast<std::uint64_t>(std::numeric_limits<T>::max()), where, ": \"", key, "\" is too large");
  return static_cast<T>(v);
}

/// Splits "optimizer.state.<index>.<name>" into its index and name.
inline std::pair<std::int64_t, std::string> optimizer_state_name(std::string_view name) {
  std::string_view rest = name.substr(optimizer_prefix.size());
  std::size_t dot = rest.find('.');
  std::int64_t index = -1;
  std::string_view digits = rest.substr(0, dot);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  LT_CHECK(dot != std::string_view::npos && dot + 1 < rest.size() && ec == std::errc() &&
               end == digits.data() + digits.size() && index >= 0 && (digits.size() == 1 || digits[0] != '0'),
           "tensor '", name, "' is not named optimizer.state.<index>.<name>");
  return {index, std::string(rest.substr(dot + 1))};
}

/// What a file holds for each part, read and checked before any part changes.
struct CheckpointParts {
  nn::StateDict model;
  optim::OptimizerState optimizer;
  optim::SchedulerState scheduler;
  RandomState rng;
  data::LoaderPosition loader;
  Metadata user;
};

inline CheckpointParts read_parts(const Checkpoint& c, SafetensorsContents& file) {
  CheckpointParts parts;
  Json saved = parse_json(file.metadata, "checkpoint.parts");
  auto has = [&](std::string_view part) {
    for (const Json& p : saved)
      if (p.is_string() && p.get_ref<const std::string&>() == part) return true;
    return false;
  };
  LT_CHECK(saved.is_array(), "checkpoint.parts must be a list");
  using Asked = std::pair<bool, std::string_view>;
  for (auto [asked, part] : {Asked{c.model != nullptr, "model"}, Asked{c.optimizer != nullptr, "optimizer"},
                             Asked{c.scheduler != nullptr, "scheduler"}, Asked{c.rng, "rng"},
                             Asked{c.loader != nullptr, "loader"}})
    LT_CHECK(!asked || has(part), "the file holds no ", part, " state");
  for (auto& [name, t] : file.tensors) {
    if (name.starts_with(model_prefix)) {
      parts.model.emplace(name.substr(model_prefix.size()), t);
    } else if (name.starts_with(optimizer_prefix)) {
      auto [index, key] = optimizer_state_name(name);
      parts.optimizer.state[index][key] = t;
    } else {
      fail("tensor '", name, "' belongs to no part of a checkpoint");
    }
  }
  if (c.optimizer) parts.optimizer.param_groups = param_groups_from(parse_json(file.metadata, "checkpoint.optimizer"));
  if (c.scheduler)
    parts.scheduler = hyperparameters_from(parse_json(file.metadata, "checkpoint.scheduler"), "checkpoint.scheduler");
  if (c.rng) {
    Json rng = parse_json(file.metadata, "checkpoint.rng");
    parts.rng = {unsigned_field<std::uint64_t>(rng, "seed", "checkpoint.rng"),
                 unsigned_field<std::uint64_t>(rng, "offset", "checkpoint.rng")};
  }
  if (c.loader) {
    Json loader = parse_json(file.metadata, "checkpoint.loader");
    parts.loader = {unsigned_field<std::uint64_t>(loader, "epoch", "checkpoint.loader"),
                    unsigned_field<std::int64_t>(loader, "batch", "checkpoint.loader")};
  }
  for (auto& [key, value] : file.metadata)
    if (!key.starts_with(reserved_prefix)) parts.user.emplace(key, value);
  return parts;
}

}  // namespace io::detail

void Checkpoint::save(const std::string& path, const Metadata& metadata, const SaveOptions& options) const {
  using io::detail::Json;
  Metadata meta;
  TensorMap tensors;
  Json parts = Json::array();
  try {
    for (auto& [key, value] : metadata) {
      LT_CHECK(!key.starts_with(io::detail::reserved_prefix), "the metadata key '", key,
               "' starts with checkpoint., which checkpoints keep for themselves");
      meta.emplace(key, value);
    }
    if (model) {
      for (auto& [name, t] : model->state_dict()) tensors.emplace(std::string(io::detail::model_prefix) + name, t);
      parts.push_back("model");
    }
    if (optimizer) {
      optim::OptimizerState s = optimizer->state_dict();
      for (auto& [index, entry] : s.state)
        for (auto& [name, t] : entry)
          tensors.emplace(std::string(io::detail::optimizer_prefix) + std::to_string(index) + "." + name, t);
      meta["checkpoint.optimizer"] = io::detail::param_groups_json(s).dump();
      parts.push_back("optimizer");
    }
    if (scheduler) {
      meta["checkpoint.scheduler"] = io::detail::to_json(scheduler->state_dict(), "scheduler state").dump();
      parts.push_back("scheduler");
    }
    if (rng) {
      RandomState s = default_generator().state();
      meta["checkpoint.rng"] = Json{{"seed", s.seed}, {"offset", s.offset}}.dump();
      parts.push_back("rng");
    }
    if (loader) {
      meta["checkpoint.loader"] = Json{{"epoch", loader->epoch}, {"batch", loader->batch}}.dump();
      parts.push_back("loader");
    }
    meta["checkpoint.parts"] = parts.dump();
  } catch (const Error& e) {
    fail("Checkpoint.save: ", path, ": ", e.what());
  }
  lt::save(tensors, path, meta, options);
}

Metadata Checkpoint::load(const std::string& path) const {
  SafetensorsContents file = load_with_metadata(path, cpu, {.mmap = true});
  io::detail::CheckpointParts parts;
  try {
    parts = io::detail::read_parts(*this, file);
  } catch (const Error& e) {
    fail("Checkpoint.load: ", path, ": ", e.what());
  }
  // Each part checks everything before it changes; a part that refuses rolls back the ones
  // restored before it from their states as they were.
  nn::StateDict old_model = model ? model->state_dict() : nn::StateDict{};
  optim::OptimizerState old_optimizer = optimizer ? optimizer->state_dict() : optim::OptimizerState{};
  int restored = 0;
  try {
    if (model) model->load_state_dict(parts.model);
    ++restored;
    if (optimizer) optimizer->load_state_dict(parts.optimizer);
    ++restored;
    if (scheduler) scheduler->load_state_dict(parts.scheduler);
  } catch (const Error& e) {
    if (restored >= 2 && optimizer) optimizer->load_state_dict(old_optimizer);
    if (restored >= 1 && model) model->load_state_dict(old_model);
    fail("Checkpoint.load: ", path, ": ", e.what());
  }
  if (rng) default_generator().set_state(parts.rng);
  if (loader) *loader = parts.loader;
  return parts.user;
}

}  // namespace lt

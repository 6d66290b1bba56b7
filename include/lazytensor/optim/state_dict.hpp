#pragma once
// An optimizer's state in PyTorch's layout (torch.optim.Optimizer.state_dict()): per-parameter
// state tensors by parameter index, and the param groups with their hyper-parameters and the
// indices of their parameters. Checkpoints (io/) save and restore it.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lazytensor/runtime/values.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt::optim {

/// A hyper-parameter as PyTorch keeps it: a number, a flag, or a tuple of numbers (betas).
using Hyperparameter = std::variant<double, bool, std::vector<double>>;
/// Hyper-parameters by name.
using Hyperparameters = std::map<std::string, Hyperparameter>;

/// One of PyTorch's param_groups: hyper-parameters by name ("lr", "momentum", "betas", ...)
/// and the indices of its parameters.
struct ParamGroup {
  /// The group's hyper-parameters by name.
  Hyperparameters options;
  /// Indices of the group's parameters in the optimizer's order.
  std::vector<std::int64_t> params;
  /// Equal when the hyper-parameters and indices are.
  friend bool operator==(const ParamGroup&, const ParamGroup&) = default;
};

/// Per-parameter state by parameter index ("momentum_buffer"; "step", "exp_avg",
/// "exp_avg_sq"), then the param groups.
struct OptimizerState {
  /// Each parameter's state tensors by name, by parameter index.
  std::map<std::int64_t, std::map<std::string, Tensor>> state;
  /// The param groups, each with the indices of its parameters.
  std::vector<ParamGroup> param_groups;
};

namespace detail {

/// Reads the hyper-parameters of a loaded state, checking each one's kind. `where` names the
/// map in messages, e.g. "SGD.load_state_dict: param_groups[0]".
class GroupReader {
 public:
  GroupReader(std::string where, const Hyperparameters& options) : where_(std::move(where)), options_(options) {}

  double number(const std::string& key) const {
    const double* v = std::get_if<double>(&at(key));
    LT_CHECK(v != nullptr, where_, "[\"", key, "\"] must be a number");
    return *v;
  }
  bool flag(const std::string& key) const {
    const bool* v = std::get_if<bool>(&at(key));
    LT_CHECK(v != nullptr, where_, "[\"", key, "\"] must be true or false");
    return *v;
  }
  std::vector<double> numbers(const std::string& key, std::size_t count) const {
    const auto* v = std::get_if<std::vector<double>>(&at(key));
    LT_CHECK(v != nullptr && v->size() == count, where_, "[\"", key, "\"] must be ", count, " numbers");
    return *v;
  }
  /// Refuses keys outside `known`, and PyTorch's flags that lazytensor does not implement
  /// unless they are off.
  void check_keys(std::initializer_list<std::string_view> known) const {
    check_keys(std::vector<std::string_view>(known));
  }
  void check_keys(const std::vector<std::string_view>& known) const {
    for (auto& [key, value] : options_) {
      bool ok = false;
      for (std::string_view k : known) ok = ok || k == key;
      if (ok) continue;
      for (std::string_view flag : {"maximize", "amsgrad", "capturable", "differentiable"})
        if (key == flag) {
          const bool* on = std::get_if<bool>(&value);
          LT_CHECK(on != nullptr && !*on, where_, "[\"", key, "\"]: only false is implemented");
          ok = true;
        }
      LT_CHECK(ok, where_, ": unknown key '", key, "'");
    }
  }

 private:
  const Hyperparameter& at(const std::string& key) const {
    auto it = options_.find(key);
    LT_CHECK(it != options_.end(), where_, " has no \"", key, "\"");
    return it->second;
  }
  std::string where_;
  const Hyperparameters& options_;
};

/// Where a loaded group sits, for messages.
inline std::string group_where(std::string_view optimizer, std::size_t group = 0) {
  return std::string(optimizer) + ".load_state_dict: param_groups[" + std::to_string(group) + "]";
}

/// Checks the layout every lazytensor optimizer shares: the optimizer's groups, each over the
/// parameter indices `groups` gives, and state only for its parameters, each entry holding
/// exactly `names`, shaped as its parameter (a "step" holds one element).
inline void check_layout(std::string_view optimizer, const OptimizerState& s, const std::vector<Tensor>& params,
                         const std::vector<std::vector<std::int64_t>>& groups,
                         std::initializer_list<std::string_view> names) {
  LT_CHECK(s.param_groups.size() == groups.size(), optimizer, ".load_state_dict: expected ", groups.size(),
           " param groups, got ", s.param_groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::vector<std::int64_t>& ids = s.param_groups[g].params;
    LT_CHECK(ids.size() == groups[g].size(), optimizer, ".load_state_dict: param group ", g, " holds ", ids.size(),
             " parameters, the optimizer's ", groups[g].size());
    // A group's parameters are consecutive: groups were made one after the other.
    for (std::size_t k = 0; k < ids.size(); ++k)
      LT_CHECK(ids[k] == groups[g][k], optimizer, ".load_state_dict: param group ", g, " must hold parameters ",
               groups[g].front(), "..", groups[g].back(), " in order, got ", ids[k], " in place ", k);
  }
  for (auto& [index, entry] : s.state) {
    LT_CHECK(index >= 0 && index < static_cast<std::int64_t>(params.size()), optimizer,
             ".load_state_dict: state for parameter ", index, ", which the optimizer does not have");
    LT_CHECK(entry.size() == names.size(), optimizer, ".load_state_dict: state of parameter ", index, " holds ",
             entry.size(), " values, expected ", names.size());
    const Tensor& p = params[static_cast<std::size_t>(index)];
    for (std::string_view name : names) {
      auto it = entry.find(std::string(name));
      LT_CHECK(it != entry.end() && it->second.defined(), optimizer, ".load_state_dict: state of parameter ", index,
               " has no ", name);
      if (name == "step")
        LT_CHECK(it->second.numel() == 1, optimizer, ".load_state_dict: step of parameter ", index,
                 " must hold one value");
      else
        LT_CHECK(it->second.shape() == p.shape(), optimizer, ".load_state_dict: ", name, " of parameter ", index,
                 " has shape ", it->second.shape(), ", the parameter ", p.shape());
    }
  }
}

/// A state value moved to its parameter's device and dtype, as a tensor of the optimizer's own.
inline Tensor state_value(const Tensor& t, const Tensor& param) {
  return t.to(param.device()).to(param.dtype()).detach();
}

/// The step count as PyTorch stores it: a zero-dim float32 tensor (f64 beyond 2^24, where
/// float32 would round it).
inline Tensor step_tensor(long steps) {
  std::vector<double> v{static_cast<double>(steps)};
  Tensor t = from_vector(v, Shape{}, cpu);
  return steps <= (1L << 24) ? t.to(f32) : t;
}

/// The step count a "step" tensor holds: a whole, non-negative number.
inline long step_value(std::string_view optimizer, const Tensor& t) {
  double v = t.to(f64).item<double>();
  LT_CHECK(v >= 0 && v <= 9.0e15 && v == static_cast<double>(static_cast<long>(v)), optimizer,
           ".load_state_dict: step must be a whole non-negative number, got ", v);
  return static_cast<long>(v);
}

}  // namespace detail
}  // namespace lt::optim

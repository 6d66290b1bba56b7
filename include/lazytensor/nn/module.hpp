#pragma once
// lt::nn::Module: the base of layers and models. A module names its parameters, buffers and
// submodules, which are its own data members; it walks them for parameters(), state_dict(),
// train()/eval() and to(device).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "lazytensor/autograd/grad_mode.hpp"
#include "lazytensor/runtime/values.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"

namespace lt::nn {

/// Parameters and buffers by dotted name ("fc1.weight"), as PyTorch's state_dict.
using StateDict = std::map<std::string, Tensor>;

namespace detail {
/// Rebinds every handle of `t` to `value` (another device or dtype): tensors shared by several
/// modules (tied weights) stay shared. The tensor keeps requiring grad; its gradient is dropped.
inline void rebind(Tensor& t, const Tensor& value) {
  TensorImpl& dst = t.impl();
  const TensorImpl& src = value.impl();
  dst.device = src.device;
  dst.meta = src.meta;
  dst.node = src.node;
  dst.data = src.data;
  if (dst.autograd) t.mutable_grad() = {};
  track_if_pending(dst);
}
}  // namespace detail

/// Members are registered by their place in the module (an offset from the Module base), not
/// by address, so that copying or moving a module (into a Sequential, say) keeps its registry
/// true. Register only data members of the module itself. A copy shares the tensors.
class Module {
 public:
  Module() = default;
  /// Copies share the tensors: the copy's parameters are the same tensors as the original's.
  Module(const Module&) = default;
  /// Moves the registry along: it refers to members by their place, not their address.
  Module(Module&&) = default;
  /// Copy assignment; the tensors are shared, as in the copy constructor.
  Module& operator=(const Module&) = default;
  /// Move assignment.
  Module& operator=(Module&&) = default;
  virtual ~Module() = default;

  /// Every parameter of this module and its submodules, each once (tied ones included once).
  std::vector<Tensor> parameters() const {
    std::vector<Tensor> out;
    for (auto& [name, t] : named_parameters()) out.push_back(t);
    return out;
  }
  /// Parameters with their dotted names, each tensor once (under its first name).
  std::vector<std::pair<std::string, Tensor>> named_parameters() const { return unique(&Module::params_); }
  /// Every buffer of this module and its submodules (running statistics, ...), each once.
  std::vector<Tensor> buffers() const {
    std::vector<Tensor> out;
    for (auto& [name, t] : named_buffers()) out.push_back(t);
    return out;
  }
  /// Buffers with their dotted names, each tensor once (under its first name).
  std::vector<std::pair<std::string, Tensor>> named_buffers() const { return unique(&Module::buffers_); }

  /// Every parameter and buffer by name (tied tensors under each of their names). The values
  /// share storage with the module's and do not require grad.
  StateDict state_dict() const {
    StateDict out;
    walk("", [&](const std::string& name, const Tensor& t, bool) { out.emplace(name, t.detach()); });
    return out;
  }

  /// Copies `dict`'s values into the parameters and buffers (converted to their device and
  /// dtype). A missing or unexpected key or a mismatched shape raises lt::Error naming every
  /// such key, and then nothing has been changed.
  void load_state_dict(const StateDict& dict) {
    std::vector<std::pair<Tensor*, const Tensor*>> updates;
    std::string missing, mismatched, unexpected;
    std::unordered_set<std::string> known;
    walk_mutable("", [&](const std::string& name, Tensor& t) {
      known.insert(name);
      auto it = dict.find(name);
      if (it == dict.end() || !it->second.defined()) {
        missing += (missing.empty() ? "" : ", ") + name;
      } else if (it->second.shape() != t.shape()) {
        mismatched += ::lt::detail::concat(mismatched.empty() ? "" : ", ", name, " (the module has ", t.shape().str(),
                                          ", the dict ", it->second.shape().str(), ")");
      } else {
        updates.emplace_back(&t, &it->second);
      }
    });
    for (auto& [name, t] : dict)
      if (!known.contains(name)) unexpected += (unexpected.empty() ? "" : ", ") + name;
    if (!missing.empty() || !mismatched.empty() || !unexpected.empty())
      fail("load_state_dict: ", missing.empty() ? "" : "missing keys: " + missing + "; ",
           unexpected.empty() ? "" : "unexpected keys: " + unexpected + "; ",
           mismatched.empty() ? "" : "shapes differ: " + mismatched + "; ", "nothing was loaded");
    // Convert everything first: a failing conversion leaves the module as it was.
    std::vector<Tensor> values;
    values.reserve(updates.size());
    no_grad guard;
    for (auto& [dst, src] : updates) values.push_back(src->to(dst->device()).to(dst->dtype()).detach());
    for (std::size_t k = 0; k < updates.size(); ++k) updates[k].first->assign(values[k]);
  }

  /// Training mode (the default) for this module and its submodules; eval() = train(false).
  Module& train(bool on = true) {
    training_ = on;
    for (auto& c : children_) child(c.offset).train(on);
    return *this;
  }
  /// Evaluation mode for this module and its submodules: same as train(false).
  Module& eval() { return train(false); }
  /// Whether the module is in training mode.
  bool is_training() const { return training_; }

  /// Moves every parameter and buffer to `device` in place: handles to them, tied modules and
  /// optimizers built before see the move. Gradients are dropped.
  Module& to(Device device) {
    return convert([&](const Tensor& t) { return t.to(device); });
  }
  /// Converts the floating parameters and buffers to `dtype` in place.
  Module& to(DType dtype) {
    return convert([&](const Tensor& t) { return is_floating(t.dtype()) ? t.to(dtype) : t; });
  }

  /// Submodules with their names, direct children only.
  std::vector<std::pair<std::string, const Module*>> named_children() const {
    std::vector<std::pair<std::string, const Module*>> out;
    for (auto& c : children_) out.emplace_back(c.name, &child(c.offset));
    return out;
  }

 protected:
  /// Registers data member `t` as parameter `name`; it then requires grad (floating tensors).
  Tensor& register_parameter(std::string name, Tensor& t) {
    add(params_, std::move(name), &t);
    if (t.defined() && is_floating(t.dtype()) && !t.requires_grad()) t.requires_grad_();
    return t;
  }
  /// Registers data member `t` as a buffer: state that is saved but not trained.
  Tensor& register_buffer(std::string name, Tensor& t) {
    add(buffers_, std::move(name), &t);
    return t;
  }
  /// Registers data member `m` as submodule `name`: its parameters appear as "name.weight", ...
  template <class M>
  M& register_module(std::string name, M& m) {
    add(children_, std::move(name), static_cast<Module*>(&m));
    return m;
  }
  /// Registers submodules named by position: "0", "1", ...
  template <class... Ms>
    requires(std::is_base_of_v<Module, Ms> && ...)
  void register_modules(Ms&... ms) {
    std::size_t k = children_.size();
    (register_module(std::to_string(k++), ms), ...);
  }
  /// Registers submodules named by a comma-separated list, as LT_REGISTER_MODULES writes it.
  template <class... Ms>
  void register_modules(std::string_view names, Ms&... ms) {
    std::vector<std::string> split;
    for (std::size_t start = 0; start <= names.size();) {
      std::size_t end = std::min(names.find(',', start), names.size());
      std::string_view n = names.substr(start, end - start);
      while (!n.empty() && n.front() == ' ') n.remove_prefix(1);
      while (!n.empty() && n.back() == ' ') n.remove_suffix(1);
      split.emplace_back(n);
      start = end + 1;
    }
    LT_CHECK(split.size() == sizeof...(Ms), "register_modules: ", split.size(), " names for ", sizeof...(Ms),
             " modules");
    std::size_t k = 0;
    (register_module(split[k++], ms), ...);
  }

 private:
  struct Entry {
    std::string name;
    std::ptrdiff_t offset;  // from this Module base to the member
  };

  template <class T>
  void add(std::vector<Entry>& list, std::string name, T* member) {
    LT_CHECK(!name.empty() && name.find('.') == std::string::npos, "Module: bad name '", name,
             "' (names are not empty and have no '.')");
    for (auto* l : {&params_, &buffers_, &children_})
      for (auto& e : *l) LT_CHECK(e.name != name, "Module: the name '", name, "' is registered already");
    list.push_back({std::move(name), reinterpret_cast<const char*>(member) - reinterpret_cast<const char*>(this)});
  }
  Tensor& tensor(std::ptrdiff_t offset) const {
    return *reinterpret_cast<Tensor*>(const_cast<char*>(reinterpret_cast<const char*>(this)) + offset);
  }
  Module& child(std::ptrdiff_t offset) const {
    return *reinterpret_cast<Module*>(const_cast<char*>(reinterpret_cast<const char*>(this)) + offset);
  }

  /// Calls f(name, tensor, is_parameter) for every defined parameter and buffer, depth first.
  template <class F>
  void walk(const std::string& prefix, F&& f) const {
    for (auto& e : params_)
      if (tensor(e.offset).defined()) f(prefix + e.name, tensor(e.offset), true);
    for (auto& e : buffers_)
      if (tensor(e.offset).defined()) f(prefix + e.name, tensor(e.offset), false);
    for (auto& c : children_) child(c.offset).walk(prefix + c.name + ".", f);
  }
  template <class F>
  void walk_mutable(const std::string& prefix, F&& f) {
    walk(prefix, [&](const std::string& name, const Tensor& t, bool) { f(name, const_cast<Tensor&>(t)); });
  }

  std::vector<std::pair<std::string, Tensor>> unique(std::vector<Entry> Module::*which) const {
    std::vector<std::pair<std::string, Tensor>> out;
    std::unordered_set<const TensorImpl*> seen;
    collect(which, "", seen, out);
    return out;
  }
  void collect(std::vector<Entry> Module::*which, const std::string& prefix, std::unordered_set<const TensorImpl*>& seen,
               std::vector<std::pair<std::string, Tensor>>& out) const {
    for (auto& e : this->*which) {
      const Tensor& t = tensor(e.offset);
      if (t.defined() && seen.insert(t.impl_ptr().get()).second) out.emplace_back(prefix + e.name, t);
    }
    for (auto& c : children_) child(c.offset).collect(which, prefix + c.name + ".", seen, out);
  }

  template <class F>
  Module& convert(F&& f) {
    std::vector<Tensor*> targets;
    std::unordered_set<const TensorImpl*> seen;
    walk_mutable("", [&](const std::string&, Tensor& t) {
      if (seen.insert(t.impl_ptr().get()).second) targets.push_back(&t);
    });
    std::vector<Tensor> values;  // all converted before any is rebound: a failure changes nothing
    values.reserve(targets.size());
    {
      no_grad guard;
      for (Tensor* t : targets) values.push_back(f(*t));
    }
    for (std::size_t k = 0; k < targets.size(); ++k) detail::rebind(*targets[k], values[k]);
    return *this;
  }

  std::vector<Entry> params_, buffers_, children_;
  bool training_ = true;
};

}  // namespace lt::nn

/// Registers the named submodules under their own names: LT_REGISTER_MODULES(conv1, fc1)
/// inside a module's constructor names them "conv1" and "fc1".
#define LT_REGISTER_MODULES(...) this->register_modules(#__VA_ARGS__, __VA_ARGS__)

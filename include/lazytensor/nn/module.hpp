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
#include "lazytensor/autograd/zero_grad.hpp"
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

  /// Resets the gradients of every parameter, as the optimizers' zero_grad: by default they
  /// become undefined (PyTorch's set_to_none=True), and the next backward() sets them afresh;
  /// with set_to_none false each defined gradient is set to zeros in place, ops that name the
  /// line calling it.
  void zero_grad(bool set_to_none = true, Site site = Site::current()) {
    RecordingSite at(site);
    for (auto& [name, p] : named_parameters()) ::lt::detail::reset_grad(p, set_to_none);
  }

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

namespace detail {
/// Whether `m.forward(args..., site)` is a call: forward takes the caller's line last.
template <class M, class... Args>
concept forward_takes_site = requires(M m, const Site& site, Args&&... args) {
  m.forward(std::forward<Args>(args)..., site);
};
/// Whether `m(args...)` has a forward to call, with or without the caller's line.
template <class M, class... Args>
concept has_forward = forward_takes_site<M, Args...> || requires(M m, Args&&... args) {
  m.forward(std::forward<Args>(args)...);
};
/// m.forward(args..., site) where forward takes a site, else m.forward(args...).
template <class M, class... Args>
decltype(auto) call_forward(M& m, const Site& site, Args&&... args) {
  if constexpr (forward_takes_site<M&, Args...>) return m.forward(std::forward<Args>(args)..., site);
  else return m.forward(std::forward<Args>(args)...);
}
}  // namespace detail

/// The base that makes a module callable: `model(x, ...)` calls `model.forward(x, ...)`.
/// Derive a model from it with its own type, `struct Net : lt::nn::Callable<Net>`; it is a
/// Module, with everything a Module has. (C++20 has no way for the Module base to name the
/// derived type's forward; LibTorch's answer is TORCH_MODULE's holder, this one is a base.)
///
/// The call takes the caller's line (core/site.hpp) as a defaulted last parameter, as every
/// recording function does, and gives it to a forward whose last parameter is a `Site`: the
/// layers' forward opens a RecordingSite with it, so `fc(x)` names the line of `fc(x)`. A
/// forward without one (a model of your own) is called without it, and each of its ops names
/// its own line there, as when forward is called directly. A site parameter cannot follow a
/// parameter pack, so the call takes one to six arguments (with none, a generic forward would
/// be instantiated with the site as its input); a forward of more, or one called with `{}`
/// for an argument (which no template deduces), spells out its own operator(), as
/// MultiheadAttention does.
template <class Derived>
class Callable : public Module {
 public:
  // D stands for Derived so that nothing is looked up in it before a call, where it is complete.
  /// Calls forward(a1, site) where forward takes the caller's line last, else forward(a1),
  /// and returns what it returns.
  template <class D = Derived, class A1>
    requires detail::has_forward<D&, A1>
  decltype(auto) operator()(A1&& a1, Site site = Site::current()) {
    return detail::call_forward(static_cast<D&>(*this), site, std::forward<A1>(a1));
  }
  /// Calls forward(a1, a2, site) where forward takes the caller's line last, else forward(a1, a2),
  /// and returns what it returns.
  template <class D = Derived, class A1, class A2>
    requires detail::has_forward<D&, A1, A2>
  decltype(auto) operator()(A1&& a1, A2&& a2, Site site = Site::current()) {
    return detail::call_forward(static_cast<D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2));
  }
  /// Calls forward(a1, a2, a3, site) where forward takes the caller's line last, else forward(a1, a2, a3),
  /// and returns what it returns.
  template <class D = Derived, class A1, class A2, class A3>
    requires detail::has_forward<D&, A1, A2, A3>
  decltype(auto) operator()(A1&& a1, A2&& a2, A3&& a3, Site site = Site::current()) {
    return detail::call_forward(static_cast<D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2),
                                std::forward<A3>(a3));
  }
  /// Calls forward(a1, ..., a4, site) where forward takes the caller's line last, else forward(a1, ..., a4),
  /// and returns what it returns.
  template <class D = Derived, class A1, class A2, class A3, class A4>
    requires detail::has_forward<D&, A1, A2, A3, A4>
  decltype(auto) operator()(A1&& a1, A2&& a2, A3&& a3, A4&& a4, Site site = Site::current()) {
    return detail::call_forward(static_cast<D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2),
                                std::forward<A3>(a3), std::forward<A4>(a4));
  }
  /// Calls forward(a1, ..., a5, site) where forward takes the caller's line last, else forward(a1, ..., a5),
  /// and returns what it returns.
  template <class D = Derived, class A1, class A2, class A3, class A4, class A5>
    requires detail::has_forward<D&, A1, A2, A3, A4, A5>
  decltype(auto) operator()(A1&& a1, A2&& a2, A3&& a3, A4&& a4, A5&& a5, Site site = Site::current()) {
    return detail::call_forward(static_cast<D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2),
                                std::forward<A3>(a3), std::forward<A4>(a4), std::forward<A5>(a5));
  }
  /// Calls forward(a1, ..., a6, site) where forward takes the caller's line last, else forward(a1, ..., a6),
  /// and returns what it returns.
  template <class D = Derived, class A1, class A2, class A3, class A4, class A5, class A6>
    requires detail::has_forward<D&, A1, A2, A3, A4, A5, A6>
  decltype(auto) operator()(A1&& a1, A2&& a2, A3&& a3, A4&& a4, A5&& a5, A6&& a6, Site site = Site::current()) {
    return detail::call_forward(static_cast<D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2),
                                std::forward<A3>(a3), std::forward<A4>(a4), std::forward<A5>(a5), std::forward<A6>(a6));
  }

  /// The same on a const module: a const forward(a1).
  template <class D = Derived, class A1>
    requires detail::has_forward<const D&, A1>
  decltype(auto) operator()(A1&& a1, Site site = Site::current()) const {
    return detail::call_forward(static_cast<const D&>(*this), site, std::forward<A1>(a1));
  }
  /// The same on a const module: a const forward(a1, a2).
  template <class D = Derived, class A1, class A2>
    requires detail::has_forward<const D&, A1, A2>
  decltype(auto) operator()(A1&& a1, A2&& a2, Site site = Site::current()) const {
    return detail::call_forward(static_cast<const D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2));
  }
  /// The same on a const module: a const forward(a1, a2, a3).
  template <class D = Derived, class A1, class A2, class A3>
    requires detail::has_forward<const D&, A1, A2, A3>
  decltype(auto) operator()(A1&& a1, A2&& a2, A3&& a3, Site site = Site::current()) const {
    return detail::call_forward(static_cast<const D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2),
                                std::forward<A3>(a3));
  }
  /// The same on a const module: a const forward(a1, ..., a4).
  template <class D = Derived, class A1, class A2, class A3, class A4>
    requires detail::has_forward<const D&, A1, A2, A3, A4>
  decltype(auto) operator()(A1&& a1, A2&& a2, A3&& a3, A4&& a4, Site site = Site::current()) const {
    return detail::call_forward(static_cast<const D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2),
                                std::forward<A3>(a3), std::forward<A4>(a4));
  }
  /// The same on a const module: a const forward(a1, ..., a5).
  template <class D = Derived, class A1, class A2, class A3, class A4, class A5>
    requires detail::has_forward<const D&, A1, A2, A3, A4, A5>
  decltype(auto) operator()(A1&& a1, A2&& a2, A3&& a3, A4&& a4, A5&& a5, Site site = Site::current()) const {
    return detail::call_forward(static_cast<const D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2),
                                std::forward<A3>(a3), std::forward<A4>(a4), std::forward<A5>(a5));
  }
  /// The same on a const module: a const forward(a1, ..., a6).
  template <class D = Derived, class A1, class A2, class A3, class A4, class A5, class A6>
    requires detail::has_forward<const D&, A1, A2, A3, A4, A5, A6>
  decltype(auto) operator()(A1&& a1, A2&& a2, A3&& a3, A4&& a4, A5&& a5, A6&& a6, Site site = Site::current()) const {
    return detail::call_forward(static_cast<const D&>(*this), site, std::forward<A1>(a1), std::forward<A2>(a2),
                                std::forward<A3>(a3), std::forward<A4>(a4), std::forward<A5>(a5), std::forward<A6>(a6));
  }
};

}  // namespace lt::nn

/// Registers the named submodules under their own names: LT_REGISTER_MODULES(conv1, fc1)
/// inside a module's constructor names them "conv1" and "fc1".
#define LT_REGISTER_MODULES(...) this->register_modules(#__VA_ARGS__, __VA_ARGS__)

#pragma once
// Sequential<M1, M2, ...>: modules of any types applied in order, chained at compile time.
// Its children are named "0", "1", ..., as in PyTorch.
#include <tuple>
#include <utility>

#include "lazytensor/nn/module.hpp"

namespace lt::nn {

/// Modules of any types chained at compile time, as torch.nn.Sequential; held by value in a std::tuple and
/// registered as submodules "0", "1", ...
template <class... Ms>
class Sequential : public Callable<Sequential<Ms...>> {
  static_assert(sizeof...(Ms) > 0, "lt::nn::Sequential needs at least one module");
  static_assert((std::is_base_of_v<Module, Ms> && ...), "lt::nn::Sequential holds lt::nn::Module types only");

 public:
  /// Takes the modules by value (copies share their tensors).
  explicit Sequential(Ms... modules) : modules_(std::move(modules)...) {
    std::apply([&](auto&... m) { this->register_modules(m...); }, modules_);
  }

  /// Passes x through each module in turn and returns the last one's output; each module's ops
  /// name the line that called this.
  template <class X>
  auto forward(X&& x, Site site = Site::current()) {
    RecordingSite at(site);
    return std::apply([&](auto&... m) { return chain(std::forward<X>(x), m...); }, modules_);
  }

  /// The i-th module, with its own type.
  template <std::size_t I>
  auto& get() { return std::get<I>(modules_); }
  /// The i-th module, with its own type.
  template <std::size_t I>
  const auto& get() const { return std::get<I>(modules_); }
  /// The number of modules.
  static constexpr std::size_t size() { return sizeof...(Ms); }

 private:
  template <class X>
  static decltype(auto) chain(X&& x) { return std::forward<X>(x); }
  template <class X, class M, class... Rest>
  static auto chain(X&& x, M& m, Rest&... rest) { return chain(m(std::forward<X>(x)), rest...); }

  std::tuple<Ms...> modules_;
};

template <class... Ms>
Sequential(Ms...) -> Sequential<Ms...>;

}  // namespace lt::nn

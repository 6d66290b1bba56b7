#pragma once
// lt::optim::Optimizer: the parameters an optimizer updates and its learning rate.
//
// Updates are elementwise expressions committed with Tensor::assign under lt::no_grad, so on a
// lazy device each parameter's update fuses into one kernel of the step's graph. The state
// (momentum, moments) lives in tensors the optimizer holds; assign keeps each of them one
// tensor whose pending value the barrier computes, so it is device data in the next step. The
// learning rate and every other hyper-parameter enter as C++ scalars: values of the plan, not
// part of its key, so a schedule compiles nothing (unless a value becomes exactly 0 or 1).
#include <string_view>
#include <utility>
#include <vector>

#include "lazytensor/autograd/grad_mode.hpp"
#include "lazytensor/autograd/zero_grad.hpp"
#include "lazytensor/optim/state_dict.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"

namespace lt::optim {

/// The base of optimizers: the parameters it updates in param groups (PyTorch's param_groups), each
/// group's learning rate, and the step count. An update is recorded, not run: on a lazy device the next
/// barrier runs it with the step.
class Optimizer {
 public:
  /// One group of `params`. Checks that each parameter is a leaf that requires grad and that `lr` is not
  /// negative (lt::Error naming `name` otherwise).
  Optimizer(std::string_view name, std::vector<Tensor> params, double lr)
      : Optimizer(name, std::vector<std::vector<Tensor>>{std::move(params)}, std::vector<double>{lr}) {}
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  /// Applies one update to every parameter that has a gradient; its ops name the line calling it.
  void step(Site site = Site::current()) {
    RecordingSite at(site);
    no_grad guard;
    ++steps_;
    for (std::size_t k = 0; k < params_.size(); ++k)
      if (params_[k].grad().defined()) update(k, params_[k], params_[k].grad());
  }

  /// Drops the gradients (PyTorch's set_to_none=True, the default): the next backward() sets
  /// them afresh. With set_to_none false each defined gradient is set to zeros in place, ops
  /// that name the line calling it.
  void zero_grad(bool set_to_none = true, Site site = Site::current()) {
    RecordingSite at(site);
    for (Tensor& p : params_) ::lt::detail::reset_grad(p, set_to_none);
  }

  /// The learning rate of the first param group (of the only one, unless made with groups).
  double lr() const { return lrs_[0]; }
  /// Sets every group's learning rate (a value of the plan, so it compiles nothing unless it becomes 0 or
  /// 1); raises lt::Error if negative.
  void set_lr(double lr) {
    LT_CHECK(lr >= 0, "set_lr: the learning rate must not be negative, got ", lr);
    for (double& r : lrs_) r = lr;
  }
  /// How many param groups it has.
  std::size_t num_param_groups() const { return lrs_.size(); }
  /// The learning rate of param group `group` (lt::Error out of range).
  double lr(std::size_t group) const { return lrs_[checked_group(group)]; }
  /// Sets the learning rate of param group `group`; raises lt::Error if negative or out of range.
  void set_lr(std::size_t group, double lr) {
    LT_CHECK(lr >= 0, "set_lr: the learning rate must not be negative, got ", lr);
    lrs_[checked_group(group)] = lr;
  }
  /// The param group of parameter `index` (an index into parameters()).
  std::size_t group_of(std::size_t index) const { return group_of_.at(index); }
  /// The parameters it updates, group after group, each in the order given.
  const std::vector<Tensor>& parameters() const { return params_; }
  /// Calls of step() so far (restored by load_state_dict where the state holds it).
  long steps() const { return steps_; }

  /// The state in PyTorch's layout and names (optim/state_dict.hpp): the state tensors share
  /// the optimizer's values. An optimizer without state of its own keeps only each group's "lr".
  virtual OptimizerState state_dict() const {
    return {{}, groups([&](std::size_t g) { return Hyperparameters{{"lr", lr(g)}}; })};
  }
  /// Restores a state_dict(): hyper-parameters, learning rates, state tensors (moved to each
  /// parameter's device and dtype). Everything is checked first: a state that does not fit
  /// raises lt::Error and changes nothing.
  virtual void load_state_dict(const OptimizerState& state) {
    detail::check_layout("Optimizer", state, params_, group_indices(), {});
    std::vector<double> lrs;
    for (std::size_t g = 0; g < lrs_.size(); ++g) {
      detail::GroupReader options(detail::group_where("Optimizer", g), state.param_groups[g].options);
      options.check_keys({"lr"});
      lrs.push_back(options.number("lr"));
      LT_CHECK(lrs.back() >= 0, "Optimizer.load_state_dict: the learning rate must not be negative, got ", lrs.back());
    }
    lrs_ = std::move(lrs);
  }

 protected:
  /// Param groups: `groups[g]` updated at rate `lrs[g]`. Checks each parameter as the one-group
  /// form does, that no parameter is in two groups, and that there is a rate per group.
  Optimizer(std::string_view name, std::vector<std::vector<Tensor>> groups, std::vector<double> lrs)
      : lrs_(std::move(lrs)) {
    LT_CHECK(!groups.empty() && groups.size() == lrs_.size(), name, ": expected a learning rate for each of ",
             groups.size(), " param groups, got ", lrs_.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
      LT_CHECK(lrs_[g] >= 0, name, ": the learning rate must not be negative, got ", lrs_[g]);
      for (Tensor& p : groups[g]) {
        LT_CHECK(p.defined() && p.requires_grad() && p.is_leaf(), name,
                 ": parameters must be leaf tensors that require grad (operands: ", p.defined() ? describe(p) : "undefined",
                 ")");
        for (const Tensor& q : params_)
          LT_CHECK(&q.impl() != &p.impl(), name, ": a parameter appears more than once (in group ", group_of_[&q - params_.data()],
                   " and group ", g, ")");
        params_.push_back(std::move(p));
        group_of_.push_back(g);
      }
    }
  }

  /// Sets the count of steps taken, for an optimizer restoring its state.
  void set_steps(long steps) { steps_ = steps; }
  /// The param groups in PyTorch's layout: group g's indices with `options(g)`.
  template <class Options>
  std::vector<ParamGroup> groups(Options&& options) const {
    std::vector<ParamGroup> out;
    std::vector<std::vector<std::int64_t>> ids = group_indices();
    for (std::size_t g = 0; g < ids.size(); ++g) out.push_back({options(g), std::move(ids[g])});
    return out;
  }
  /// Each group's parameter indices.
  std::vector<std::vector<std::int64_t>> group_indices() const {
    std::vector<std::vector<std::int64_t>> ids(lrs_.size());
    for (std::size_t k = 0; k < params_.size(); ++k) ids[group_of_[k]].push_back(static_cast<std::int64_t>(k));
    return ids;
  }
  /// Sets every group's rate at once, for an optimizer restoring its state (checked already).
  void set_lrs(std::vector<double> lrs) { lrs_ = std::move(lrs); }

  /// Updates parameter `index` (`p`) with its gradient `g`, under no_grad.
  virtual void update(std::size_t index, Tensor& p, const Tensor& g) = 0;

 private:
  std::size_t checked_group(std::size_t group) const {
    LT_CHECK(group < lrs_.size(), "param group ", group, " is out of range for ", lrs_.size(), " groups");
    return group;
  }

  std::vector<Tensor> params_;
  std::vector<std::size_t> group_of_;  // by parameter index
  std::vector<double> lrs_;            // by group
  long steps_ = 0;
};

}  // namespace lt::optim

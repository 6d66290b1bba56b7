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

/// The base of optimizers: the parameters it updates, its learning rate and its step count. An update is
/// recorded, not run: on a lazy device the next barrier runs it with the step.
class Optimizer {
 public:
  /// Checks that each parameter is a leaf that requires grad and that `lr` is not negative (lt::Error naming
  /// `name` otherwise).
  Optimizer(std::string_view name, std::vector<Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
    LT_CHECK(lr >= 0, name, ": the learning rate must not be negative, got ", lr);
    for (const Tensor& p : params_)
      LT_CHECK(p.defined() && p.requires_grad() && p.is_leaf(), name,
               ": parameters must be leaf tensors that require grad (operands: ", p.defined() ? describe(p) : "undefined",
               ")");
  }
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

  /// The current learning rate.
  double lr() const { return lr_; }
  /// Sets the learning rate (a value of the plan, so it compiles nothing unless it becomes 0 or 1); raises
  /// lt::Error if negative.
  void set_lr(double lr) {
    LT_CHECK(lr >= 0, "set_lr: the learning rate must not be negative, got ", lr);
    lr_ = lr;
  }
  /// The parameters it updates, in the order given.
  const std::vector<Tensor>& parameters() const { return params_; }
  /// Calls of step() so far (restored by load_state_dict where the state holds it).
  long steps() const { return steps_; }

  /// The state in PyTorch's layout and names (optim/state_dict.hpp): the state tensors share
  /// the optimizer's values. An optimizer without state of its own keeps only "lr".
  virtual OptimizerState state_dict() const { return {{}, {group({{"lr", lr()}})}}; }
  /// Restores a state_dict(): hyper-parameters, learning rate, state tensors (moved to each
  /// parameter's device and dtype). Everything is checked first: a state that does not fit
  /// raises lt::Error and changes nothing.
  virtual void load_state_dict(const OptimizerState& state) {
    detail::check_layout("Optimizer", state, params_, {});
    detail::GroupReader options(detail::group_where("Optimizer"), state.param_groups[0].options);
    options.check_keys({"lr"});
    double lr = options.number("lr");
    LT_CHECK(lr >= 0, "Optimizer.load_state_dict: the learning rate must not be negative, got ", lr);
    set_lr(lr);
  }

 protected:
  /// Sets the count of steps taken, for an optimizer restoring its state.
  void set_steps(long steps) { steps_ = steps; }
  /// The one param group, over every parameter, with `options`.
  ParamGroup group(Hyperparameters options) const {
    ParamGroup g{std::move(options), {}};
    for (std::size_t k = 0; k < params_.size(); ++k) g.params.push_back(static_cast<std::int64_t>(k));
    return g;
  }

  /// Updates parameter `index` (`p`) with its gradient `g`, under no_grad.
  virtual void update(std::size_t index, Tensor& p, const Tensor& g) = 0;

 private:
  std::vector<Tensor> params_;
  double lr_;
  long steps_ = 0;
};

}  // namespace lt::optim

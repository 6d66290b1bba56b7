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
#include "lazytensor/trace/functions/elementwise.hpp"

namespace lt::optim {

class Optimizer {
 public:
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

  /// Applies one update to every parameter that has a gradient.
  void step() {
    no_grad guard;
    ++steps_;
    for (std::size_t k = 0; k < params_.size(); ++k)
      if (params_[k].grad().defined()) update(k, params_[k], params_[k].grad());
  }

  /// Drops the gradients (PyTorch's set_to_none): the next backward() sets them afresh.
  void zero_grad() {
    for (Tensor& p : params_) p.mutable_grad() = {};
  }

  double lr() const { return lr_; }
  void set_lr(double lr) {
    LT_CHECK(lr >= 0, "set_lr: the learning rate must not be negative, got ", lr);
    lr_ = lr;
  }
  const std::vector<Tensor>& parameters() const { return params_; }
  /// Calls of step() so far.
  long steps() const { return steps_; }

 protected:
  /// Updates parameter `index` (`p`) with its gradient `g`, under no_grad.
  virtual void update(std::size_t index, Tensor& p, const Tensor& g) = 0;

 private:
  std::vector<Tensor> params_;
  double lr_;
  long steps_ = 0;
};

}  // namespace lt::optim

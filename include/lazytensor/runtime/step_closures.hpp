#pragma once
// Step closures: functions that run once the step being traced has run, PyTorch/XLA's
// add_step_closure. A training loop logs its loss from one without a read that blocks the
// loop: the closure runs on the thread that ran the step, while the loop traces the next.
#include <array>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "lazytensor/core/device.hpp"
#include "lazytensor/core/error.hpp"

namespace lt {

namespace detail {
using StepClosure = std::function<void()>;

/// Per lazy device: the closures added since its last barrier.
struct StepClosures {
  std::mutex mu;
  std::vector<StepClosure> added;  // guarded by mu
};
inline StepClosures& step_closures(int index) {
  LT_CHECK(index >= 0 && index < max_lazy_devices, "lazy device index ", index, " is out of range");
  static std::array<StepClosures, max_lazy_devices> all;
  return all[static_cast<std::size_t>(index)];
}

/// The closures of lazy device `index`'s step being traced, in the order they were added.
inline std::vector<StepClosure> take_step_closures(int index) {
  StepClosures& c = step_closures(index);
  std::lock_guard lock(c.mu);
  return std::exchange(c.added, {});
}

/// Runs `closures` in order. The first error is raised after all have run.
inline void run_step_closures(std::vector<StepClosure>& closures) {
  std::exception_ptr first;
  for (StepClosure& fn : closures) {
    try {
      fn();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  closures.clear();
  if (first) std::rethrow_exception(first);
}
}  // namespace detail

/// Runs `fn` once the step that lazy device `dev` is tracing has run: the next barrier of
/// `dev` queues the step, and the thread that runs it calls `fn` as soon as its values are
/// there (reading them in `fn` does not block). Closures run in the order they were added.
/// One that raises has its error raised by the device's next barrier or lt::wait_device_ops().
/// With LT_ASYNC=0, or when the barrier has nothing to run, the barrier itself calls them.
/// The closures of a step that fails do not run: the step's error is raised instead.
inline void add_step_closure(std::function<void()> fn, Device dev = device()) {
  LT_CHECK(dev.is_lazy(), "add_step_closure: ", dev, " is not a lazy device");
  LT_CHECK(fn != nullptr, "add_step_closure: the closure is empty");
  detail::StepClosures& c = detail::step_closures(dev.index);
  std::lock_guard lock(c.mu);
  c.added.push_back(std::move(fn));
}

}  // namespace lt

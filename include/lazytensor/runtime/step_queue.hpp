#pragma once
// The worker of each lazy device: runs the steps that barriers queue, one at a time in the
// order they were queued, on a background thread that the first queued step starts. Kernels
// inside a step still run in parallel with TBB. LT_ASYNC=0 leaves the workers unused.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "lazytensor/core/env.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/runtime/step_closures.hpp"
#include "lazytensor/trace/tensor_impl.hpp"
#include "lazytensor/trace/pending.hpp"

namespace lt::detail {

/// LT_ASYNC=0 runs every step on the thread that calls the barrier (for debugging).
inline bool async_enabled() {
  static const bool enabled = env_flag("LT_ASYNC", true);
  return enabled;
}

/// True on a worker thread: a step never waits for the steps of a device (itself among them).
inline thread_local bool on_step_worker = false;
/// True once this thread's thread_locals are being destroyed: the kernels' per-thread scratch
/// may already be gone, so its waits leave queued steps to the worker rather than run them.
inline thread_local bool thread_ending = false;

class StepQueue {
 public:
  /// Computes the values of a step's roots.
  using RunFn = std::function<std::vector<Array>()>;

  StepQueue() = default;
  StepQueue(const StepQueue&) = delete;
  /// The lazy device whose steps this queue runs.
  void set_device_index(int index) { index_ = index; }
  StepQueue& operator=(const StepQueue&) = delete;
  /// Runs what is still queued, then joins the thread.
  ~StepQueue() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  /// Queues `step` (its roots and leaves set) to run with `run` in a task arena of `width`
  /// threads, the width of the arena the barrier was called from; `after` runs once its
  /// values are there (lt::add_step_closure).
  void enqueue(std::shared_ptr<PendingStep> step, int width, RunFn run, std::vector<StepClosure> after = {});

  /// Runs `step` on this thread now when nothing is queued or running (else queues it): for a
  /// step that takes less time than waking the worker and waiting for it would.
  void run_here(std::shared_ptr<PendingStep> step, int width, RunFn run, std::vector<StepClosure> after = {});

  /// Blocks until every queued step has finished. A step the worker has not started yet runs
  /// on this thread instead: waking the worker and then this thread again costs more than a
  /// small step.
  void wait_idle() { help_until([&] { return jobs_.empty() && !running_; }); }

  /// Blocks until `step` has finished, running queued steps up to it on this thread when the
  /// worker has not started them.
  void wait_for(const PendingStep* step) {
    help_until([&] {
      return std::none_of(jobs_.begin(), jobs_.end(), [&](const Job& j) { return j.step.get() == step; }) &&
             running_step_ != step;
    });
  }

  /// Seconds that callers have spent blocked in the waits above (steps they ran included):
  /// time the program was neither tracing nor free to trace.
  double waited_seconds() const { return static_cast<double>(waited_ns_.load(std::memory_order_relaxed)) * 1e-9; }

  /// The error of a failed step that nothing has raised yet, else of a step closure that
  /// raised, and forgets it.
  std::exception_ptr take_error() {
    std::shared_ptr<PendingStep> s;
    std::exception_ptr closure;
    {
      std::lock_guard lock(mu_);
      s.swap(failed_);
      if (!s) closure = std::exchange(closure_error_, nullptr);
    }
    return s ? s->wait() : closure;
  }
  /// A read raised the error of `s`: the next barrier need not raise it again.
  void forget_error(const PendingStep* s) {
    std::lock_guard lock(mu_);
    if (failed_.get() == s) failed_.reset();
  }

 private:
  struct Job {
    std::shared_ptr<PendingStep> step;
    int width = 0;
    RunFn run = nullptr;
    std::vector<StepClosure> after;
  };
  void loop();
  /// Runs `job` (taken off the queue, running_ set) on this thread in an arena of its width.
  void run_job(Job& job);
  /// Waits with mu_ held until done() holds, taking queued steps to run here meanwhile when
  /// nothing runs and this thread is as wide as the step (never on a worker).
  template <class Done> void help_until(Done&& done);

  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<Job> jobs_;                 // guarded by mu_
  bool running_ = false, stop_ = false;  // guarded by mu_
  const PendingStep* running_step_ = nullptr;  // guarded by mu_
  std::shared_ptr<PendingStep> failed_;  // guarded by mu_: the first failed step not yet raised
  std::exception_ptr closure_error_;     // guarded by mu_: the first step closure's error not yet raised
  std::thread thread_;                   // started by the first enqueue
  std::atomic<std::int64_t> waited_ns_{0};
  int index_ = 0;
};

/// The queues of all lazy devices. Made before the first step, so the statics it touches
/// first outlive the workers.
struct StepQueues {
  StepQueues() {
    metrics::detail::registry();
    kernels::detail::apply_thread_limit();
    for (std::size_t k = 0; k < queues.size(); ++k) queues[k].set_device_index(static_cast<int>(k));
  }
  // Metrics read at exit (LT_METRICS_FILE) must not wait on queues being destroyed; the
  // members are destroyed (workers joined) after this body.
  ~StepQueues() { metrics::detail::before_read.store(nullptr, std::memory_order_release); }
  std::array<StepQueue, max_lazy_devices> queues;
};
inline StepQueues& step_queues() {
  static StepQueues q;
  return q;
}
inline StepQueue& step_queue(int index) {
  LT_CHECK(index >= 0 && index < max_lazy_devices, "lazy device index ", index, " is out of range");
  return step_queues().queues[static_cast<std::size_t>(index)];
}

/// Waits for every queued step of every device, raising nothing.
inline void wait_all_steps() {
  if (on_step_worker) return;
  for (StepQueue& q : step_queues().queues) q.wait_idle();
}

/// Called by each thread that queues a step. A program's exit destroys the main thread's
/// thread_locals before any static, so waiting here means that no step still runs while the
/// statics it uses (TBB's, the metrics, the op tables) are destroyed.
inline void wait_for_steps_when_this_thread_ends() {
  struct Drain {
    ~Drain() {
      thread_ending = true;
      wait_all_steps();
    }
  };
  static thread_local Drain drain;
  (void)drain;
}

inline void StepQueue::enqueue(std::shared_ptr<PendingStep> step, int width, RunFn run, std::vector<StepClosure> after) {
  wait_for_steps_when_this_thread_ends();
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{std::move(step), width, std::move(run), std::move(after)});
    if (!thread_.joinable()) {
      // Metrics read after a barrier count its step: reading them waits for queued steps.
      metrics::detail::before_read.store(&wait_all_steps, std::memory_order_release);
      thread_ = std::thread([this] { loop(); });
    }
  }
  work_cv_.notify_one();
}

inline void StepQueue::run_here(std::shared_ptr<PendingStep> step, int width, RunFn run, std::vector<StepClosure> after) {
  bool here = false;
  {
    std::lock_guard lock(mu_);
    here = !on_step_worker && !running_ && jobs_.empty() && index_ == current_lazy_index &&
           width == tbb::this_task_arena::max_concurrency();
    if (here) {
      running_ = true;
      running_step_ = step.get();
    }
  }
  if (!here) return enqueue(std::move(step), width, std::move(run), std::move(after));
  Job job{std::move(step), width, std::move(run), std::move(after)};
  run_job(job);
}

inline void StepQueue::run_job(Job& job) {
  std::vector<Array> values;
  std::exception_ptr error;
  // A step runs as its device's thread: its collectives reach that device's replica group.
  struct RunAs {
    int saved = current_lazy_index;
    explicit RunAs(int index) { current_lazy_index = index; }
    ~RunAs() { current_lazy_index = saved; }
  } run_as(index_);
  auto body = [&] {
    try {
      values = job.run();
    } catch (...) {
      error = std::current_exception();
    }
  };
  if (job.width == tbb::this_task_arena::max_concurrency()) {
    body();
  } else {
    thread_local std::map<int, std::unique_ptr<tbb::task_arena>> arenas;  // by width, made when first needed
    std::unique_ptr<tbb::task_arena>& arena = arenas[job.width];
    if (!arena) arena = std::make_unique<tbb::task_arena>(job.width);
    arena->execute(body);
  }
  if (error) {
    // Noted before the step reads as finished: a read that raises it can then forget it.
    std::lock_guard lock(mu_);
    if (!failed_) failed_ = job.step;
  }
  job.step->finish(std::move(values), error);
  if (!job.after.empty()) {
    // The step reads as finished to its closures, which may read its values; the queue stays
    // busy until they are done, so that waiting for the device waits for them too.
    {
      std::lock_guard lock(mu_);
      running_step_ = nullptr;
    }
    idle_cv_.notify_all();
    try {
      if (!error) run_step_closures(job.after);
    } catch (...) {
      std::lock_guard lock(mu_);
      if (!closure_error_) closure_error_ = std::current_exception();
    }
  }
  job = {};
  std::lock_guard lock(mu_);
  running_ = false;
  running_step_ = nullptr;
  idle_cv_.notify_all();  // waiters for the queue to drain, and for this step
}

template <class Done>
void StepQueue::help_until(Done&& done) {
  std::unique_lock lock(mu_);
  if (done()) return;
  const auto start = std::chrono::steady_clock::now();
  struct CountWait {
    std::atomic<std::int64_t>& total;
    std::chrono::steady_clock::time_point start;
    ~CountWait() {
      auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
      total.fetch_add(waited.count(), std::memory_order_relaxed);
    }
  } count_wait{waited_ns_, start};
  for (;;) {
    if (done()) return;
    // Only a device's own thread helps: another device's step may wait in a collective for
    // this thread's replica.
    if (!running_ && !jobs_.empty() && !on_step_worker && !thread_ending && index_ == current_lazy_index &&
        jobs_.front().width == tbb::this_task_arena::max_concurrency()) {
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      running_ = true;
      running_step_ = job.step.get();
      lock.unlock();
      run_job(job);
      lock.lock();
      continue;
    }
    idle_cv_.wait(lock);
  }
}

inline void StepQueue::loop() {
  on_step_worker = true;
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping with nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
      running_ = true;
      running_step_ = job.step.get();
    }
    run_job(job);
  }
}

}  // namespace lt::detail

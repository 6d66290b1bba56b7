#pragma once
// TraceTime: per lazy device, the time from the end of one barrier to the start of the next,
// less the time spent blocked waiting for the device (reads, wait_device_ops): the time the
// program spends building a step. When, over a window of steps, building them
// takes longer than running them, the device waits on the tracer: that is worth a warning.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <mutex>

#include "lazytensor/core/metrics.hpp"
#include "lazytensor/runtime/profiler_events.hpp"
#include "lazytensor/runtime/step_queue.hpp"
#include "lazytensor/trace/tensor_impl.hpp"

namespace lt::detail {

class TraceClock {
 public:
  static constexpr int window_steps = 100;

  /// Times the tracing before a barrier of device `index` while it lives; the next tracing
  /// starts when it ends.
  class Barrier {
   public:
    explicit Barrier(int index)
        : clock_(of(index)), index_(index), span_("barrier", "barrier") {
      if (span_.live()) span_.arg("device", static_cast<double>(index));
      clock_.barrier_starts(index_);
    }
    ~Barrier() {
      span_.end();
      clock_.barrier_ends(index_);
    }
    Barrier(const Barrier&) = delete;
    Barrier& operator=(const Barrier&) = delete;

   private:
    TraceClock& clock_;
    int index_;
    profiler::detail::Span span_;  // on this thread's track: the graph walk, the cache look-up, queueing
  };

 private:
  using clock = std::chrono::steady_clock;

  static TraceClock& of(int index) {
    static std::array<TraceClock, max_lazy_devices> clocks;
    return clocks[static_cast<std::size_t>(index)];
  }

  void barrier_starts(int index) {
    static metrics::Timer& trace_time = metrics::timer_handle("TraceTime");
    static metrics::Timer& execute_time = metrics::timer_handle("ExecuteTime");
    static metrics::Counter& bound = metrics::counter_handle("TracingBoundWindows");
    std::lock_guard lock(mu_);
    clock::time_point now = clock::now();
    if (!started_) {
      started_ = true;
      execute_at_window_start_ = execute_time.total();
      return;
    }
    double waited = step_queue(index).waited_seconds() - waited_at_last_end_;
    double traced = std::max(0.0, std::chrono::duration<double>(now - last_end_).count() - waited);
    note_tracing(index, now, traced);
    trace_time.record(traced);
    trace_in_window_ += traced;
    if (++steps_in_window_ < window_steps) return;
    double executed = execute_time.total() - execute_at_window_start_;
    // A metrics reset inside the window leaves nothing to compare against: judge none.
    if (executed >= 0 && trace_in_window_ > executed) {
      bound.add();
      if (!warned_) {
        warned_ = true;
        std::fprintf(stderr,
                     "lazytensor: warning: lazy:%d is tracing-bound: its last %d steps took %.3g ms to trace and "
                     "%.3g ms to run; put more work in each step or write elementwise code as expressions\n",
                     index, window_steps, trace_in_window_ * 1e3, executed * 1e3);
      }
    }
    steps_in_window_ = 0;
    trace_in_window_ = 0;
    execute_at_window_start_ = execute_time.total();
  }
  void barrier_ends(int index) {
    std::lock_guard lock(mu_);
    last_end_ = clock::now();
    waited_at_last_end_ = step_queue(index).waited_seconds();
  }

  /// The profiler's span of the tracing since the last barrier, on the device's tracing track
  /// (a track of its own: it is not nested in the spans of the threads that trace).
  void note_tracing(int index, clock::time_point now, double traced) {
    if (!profiler::detail::on() || !profiler::detail::take_slot()) return;
    using std::chrono::nanoseconds;
    profiler::detail::SpanRecord span{"tracing", "tracing",
                                      std::chrono::duration_cast<nanoseconds>(last_end_.time_since_epoch()).count(),
                                      std::chrono::duration_cast<nanoseconds>(now.time_since_epoch()).count(),
                                      profiler::detail::device_tracing(index), {}, nullptr};
    span.args.push_back({"traced seconds", {}, traced, true});
    profiler::detail::record_span(std::move(span));
  }

  std::mutex mu_;
  bool started_ = false, warned_ = false;
  clock::time_point last_end_{};
  int steps_in_window_ = 0;
  double trace_in_window_ = 0, execute_at_window_start_ = 0, waited_at_last_end_ = 0;
};

}  // namespace lt::detail

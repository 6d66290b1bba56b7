#pragma once
// Running one op on arrays: the step shared by the eager device and the reference executor.
#include <array>
#include <atomic>
#include <span>
#include <string>
#include <vector>

#include "lazytensor/core/metrics.hpp"
#include "lazytensor/core/small_vector.hpp"
#include "lazytensor/ops/descriptor.hpp"

namespace lt {

/// The "lt::<op>" counter of an op, looked up once per op.
inline metrics::Counter& op_counter(const OpDesc& d) {
  static std::array<std::atomic<metrics::Counter*>, op_id_limit> handles{};
  auto& slot = handles[static_cast<std::size_t>(d.id)];
  metrics::Counter* c = slot.load(std::memory_order_acquire);
  if (c == nullptr) {
    c = &metrics::counter_handle("lt::" + std::string(d.name));
    slot.store(c, std::memory_order_release);
  }
  return *c;
}

/// Counts one run of `d`; a fragment's ops run too, fused: each is counted as its own kernel.
inline void count_run(const OpDesc& d) {
  op_counter(d).add();
  for (const FragmentStep& step : d.body)
    if (step.op != nullptr) op_counter(*step.op).add();
}

/// Runs of ops, counted as count_run counts them and added to each op's counter at once by
/// report(): a group of a hundred small ops would otherwise pay an atomic add per op per step.
class OpTally {
 public:
  void add(const OpDesc& d) {
    note(d);
    for (const FragmentStep& step : d.body)
      if (step.op != nullptr) note(*step.op);
  }
  void report() const {
    for (const OpCount& c : counts_) op_counter(*c.op).add(c.runs);
  }

 private:
  struct OpCount {
    const OpDesc* op;
    std::int64_t runs;
  };
  void note(const OpDesc& d) {
    for (OpCount& c : counts_)
      if (c.op == &d) {
        ++c.runs;
        return;
      }
    counts_.push_back({&d, 1});
  }
  SmallVector<OpCount, 8> counts_;  // a group holds few distinct ops: no allocation per run
};

/// A tally of one run, reported when it goes out of scope.
class RunCounts : public OpTally {
 public:
  RunCounts() = default;
  RunCounts(const RunCounts&) = delete;
  RunCounts& operator=(const RunCounts&) = delete;
  ~RunCounts() { report(); }
};

/// Runs `d` on `in`, producing a value of Meta `out`: an alias of in[0] where the op is a
/// view of it, otherwise a contiguous array written by the kernel: `into` when given (a
/// contiguous array of out's shape and dtype), else a fresh one.
Array execute_op(const OpDesc& d, std::span<const Array> in, const Attrs& attrs, const Meta& out,
                        const Array* into = nullptr);

}  // namespace lt

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
inline Array execute_op(const OpDesc& d, std::span<const Array> in, const Attrs& attrs, const Meta& out,
                        const Array* into = nullptr) {
  constexpr std::size_t inline_inputs = 4;
  std::array<View, inline_inputs> small;
  std::vector<View> large;
  std::span<View> views = in.size() <= inline_inputs ? std::span<View>(small.data(), in.size())
                                                     : std::span<View>((large.resize(in.size()), large));
  for (std::size_t k = 0; k < in.size(); ++k) views[k] = in[k].view;
  count_run(d);
  if (d.view != nullptr) {
    View v;
    if (d.view(views, attrs, v)) return in[0].alias(v);
  }
  Array result = into != nullptr ? *into : Array::empty(out.dtype, out.shape);
  result.view.wrapped_number = out.wrapped_number;
  if (out.shape.numel() > 0) d.kernel(views, result.view, attrs);
  return result;
}

}  // namespace lt

#pragma once
// Parallel loops over index ranges with a fixed partition, so that the split of work (and so
// any order-dependent result) does not depend on the number of threads.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <utility>

namespace lt::kernels {

/// Below this many elements of work a loop runs on the calling thread.
inline constexpr std::int64_t parallel_threshold = 1 << 15;

/// Outputs of at least this many bytes are written with streaming stores where a kernel can:
/// well past the last-level cache, so that nothing would be read back from it anyway.
inline constexpr std::int64_t streaming_store_bytes = std::int64_t{32} << 20;

/// A non-owning reference to a callable `void(begin, end)`. Kernels pass their loop bodies
/// through it so that TBB's templates are instantiated once, not once per kernel: that keeps
/// the headers quick to compile, and a call per block costs nothing measurable.
class BlockFn {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, BlockFn>)
  BlockFn(F&& f)  // NOLINT: implicit on purpose, like std::function_ref
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, std::int64_t b, std::int64_t e) { (*static_cast<std::remove_reference_t<F>*>(o))(b, e); }) {}
  void operator()(std::int64_t b, std::int64_t e) const { call_(obj_, b, e); }

 private:
  void* obj_;
  void (*call_)(void*, std::int64_t, std::int64_t);
};

namespace detail {
/// Honours LT_NUM_THREADS (defined with TBB's loop, in ops/kernels/parallel_definitions.hpp).
void apply_thread_limit();
/// Calls f over [0, n) in blocks of `grain` on TBB's threads. Defined once per program, in the
/// implementation: no file that includes this header compiles TBB's templates.
void parallel_blocks_impl(std::int64_t n, std::int64_t grain, BlockFn f);
}  // namespace detail

/// Calls f(begin, end) over [0, n) in blocks of at most `grain`, in parallel when n > grain.
template <class F>
void parallel_blocks(std::int64_t n, std::int64_t grain, F&& f) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n <= grain) {
    f(std::int64_t{0}, n);
    return;
  }
  detail::parallel_blocks_impl(n, grain, BlockFn(f));
}

/// Like parallel_blocks, choosing the grain so that one block does about
/// `parallel_threshold` units of work when each index costs `work_per_index`.
template <class F>
void parallel_for_each_block(std::int64_t n, std::int64_t work_per_index, F&& f) {
  std::int64_t w = work_per_index < 1 ? 1 : work_per_index;
  std::int64_t grain = parallel_threshold / w;
  parallel_blocks(n, grain < 1 ? 1 : grain, f);
}

}  // namespace lt::kernels

#pragma once
// A fence split in two unequal halves, for a flag that one thread checks on every op and other
// threads rarely need to change: the frequent side pays only a compiler fence, the rare side a
// process-wide one (Linux's membarrier, which makes every running thread of the process
// execute a full fence). Together they order as two full fences would. Where membarrier is
// missing or refused (an old kernel, a sandbox), available() is false and callers keep to
// their locks.
#include <atomic>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace lt::asymmetric_fence {

/// Whether heavy() works in this process (it registers the process once).
inline bool available() {
  static const bool ok = [] {
#if defined(__linux__) && defined(SYS_membarrier)
    const long commands = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    return commands >= 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
           syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return false;
#endif
  }();
  return ok;
}

/// The frequent side: orders this thread's accesses against a heavy() elsewhere.
inline void light() { std::atomic_signal_fence(std::memory_order_seq_cst); }

/// The rare side: returns after every thread of the process has run a full fence. Only when
/// available().
inline void heavy() {
#if defined(__linux__) && defined(SYS_membarrier)
  syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace lt::asymmetric_fence

#pragma once
// Arrays for the bandwidth limit on huge pages, where the kernel gives them: lazytensor's large
// buffers ask for them, so a limit measured on ordinary pages (a TLB miss per 4 KiB) would be
// a low bar (STREAM's triad read about 5% more on huge pages at 1 thread here). Not
// lt::Buffer: the LibTorch peers measure the same limit and build as C++17.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace bench {

struct FreeArray {
  void operator()(void* p) const { std::free(p); }
};
template <class T>
using HugePageArray = std::unique_ptr<T[], FreeArray>;

/// n copies of `value`, on a huge-page boundary and advised to use huge pages.
template <class T>
HugePageArray<T> huge_page_array(std::size_t n, T value) {
  constexpr std::size_t huge_page = std::size_t{2} << 20;
  const std::size_t bytes = (n * sizeof(T) + huge_page - 1) / huge_page * huge_page;
  auto* p = static_cast<T*>(std::aligned_alloc(huge_page, bytes));
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
  for (std::size_t i = 0; i < n; ++i) p[i] = value;
  return HugePageArray<T>(p);
}

}  // namespace bench

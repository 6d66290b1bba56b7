#pragma once
// The CBLAS side of the GEMM kernels, compiled in when LAZYTENSOR_HAVE_CBLAS is defined (the
// CMake option LAZYTENSOR_BLAS): float and double products on operands with a unit stride in
// one dim, and the hold on OpenBLAS's own threads.
#ifdef LAZYTENSOR_HAVE_CBLAS
#include <cstdint>
#include <limits>
#include <string>

#include <cblas.h>

#ifdef OPENBLAS_VERSION
// Stops OpenBLAS's worker threads (its fork handler's call); weak, as builds without a thread
// server may not export it.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
#endif

namespace lt::kernels::cblas {

/// Whether n fits CBLAS's 32-bit integer arguments.
inline bool fits(std::int64_t n) { return n >= 0 && n <= std::numeric_limits<int>::max(); }

// OpenBLAS's cblas.h defines OPENBLAS_VERSION and declares its extensions; another CBLAS (the
// reference one) has no threads of its own to hold.
#ifdef OPENBLAS_VERSION
/// Keeps OpenBLAS on the calling thread. Products are cut into tiles that run on TBB's threads
/// (so LT_NUM_THREADS and task arenas bound them, and the cut fixes the results); OpenBLAS's
/// threads on top would oversubscribe the cores. Checked before each product rather than set
/// once, because a program may set OpenBLAS's count for its own calls.
inline void run_on_caller_thread() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

namespace detail {
/// OpenBLAS's pthreads build (Debian's default) starts its worker threads when it loads. The
/// products never use them, so they are stopped before main: a program that links lazytensor
/// has no threads it did not ask for. OpenBLAS starts them again when a threaded call of the
/// program's own needs them. The thread count is left alone here: in OpenBLAS's OpenMP build,
/// setting it sets the main thread's OpenMP count too.
inline const bool openblas_threads_stopped = [] {
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
  return true;
}();
}  // namespace detail

/// The kernels OpenBLAS picked from the CPU when it loaded (or OPENBLAS_CORETYPE forced), in
/// lower case: "haswell", "skylakex", ...
inline std::string core_name() {
  std::string core = openblas_get_corename();
  for (char& c : core) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return core;
}

/// "OpenBLAS 0.3.21 (Cooperlake kernels)": the kernels decide its speed.
inline std::string name() {
  std::string version = OPENBLAS_VERSION;
  version.erase(0, version.find_first_not_of(' '));
  version.erase(version.find_last_not_of(' ') + 1);
  return version + " (" + openblas_get_corename() + " kernels)";
}
#else
inline void run_on_caller_thread() {}
inline std::string name() { return "CBLAS"; }
#endif

/// C[rows, cols] (row stride ldc) = op(A) op(B), row-major; a_trans: A is stored transposed.
inline void gemm(bool a_trans, bool b_trans, std::int64_t rows, std::int64_t cols, std::int64_t k, const float* a,
                 std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, a_trans ? CblasTrans : CblasNoTrans, b_trans ? CblasTrans : CblasNoTrans,
              static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
}
inline void gemm(bool a_trans, bool b_trans, std::int64_t rows, std::int64_t cols, std::int64_t k, const double* a,
                 std::int64_t lda, const double* b, std::int64_t ldb, double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, a_trans ? CblasTrans : CblasNoTrans, b_trans ? CblasTrans : CblasNoTrans,
              static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(k), 1.0, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), 0.0, c, static_cast<int>(ldc));
}

}  // namespace lt::kernels::cblas
#endif

#pragma once
// Matrix products on strided operands: Eigen's GEMM for floats, a plain loop for integers.
#include <cstdint>

#include <Eigen/Core>

namespace lt::kernels {

/// C[n, m] (contiguous) = A[n, k] * B[k, m], A and B given by element strides.
template <class T>
void gemm(const T* a, std::int64_t a_row, std::int64_t a_col, const T* b, std::int64_t b_row, std::int64_t b_col,
          T* c, std::int64_t n, std::int64_t k, std::int64_t m) {
  if constexpr (std::is_floating_point_v<T>) {
    using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using Strided = Eigen::Map<const Mat, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
    Strided A(a, n, k, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(a_row, a_col));
    Strided B(b, k, m, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(b_row, b_col));
    Eigen::Map<Mat> C(c, n, m);
    C.noalias() = A * B;
  } else {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        T acc = 0;
        for (std::int64_t p = 0; p < k; ++p) acc += a[i * a_row + p * a_col] * b[p * b_row + j * b_col];
        c[i * m + j] = acc;
      }
  }
}

}  // namespace lt::kernels

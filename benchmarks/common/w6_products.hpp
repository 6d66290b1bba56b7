#pragma once
// W6's products alone, as plain row-major cblas_sgemm calls on copies of the layer's weights:
// the "GEMM-only bound" of a TransformerEncoderLayer(256, 4, 1024) over [8, 128, 256]. The
// packed QKV projection is one call; scores and weighted sums one call per batch and head.
#include <cstdint>
#include <vector>

#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
#include <cblas.h>

namespace bench {

/// W6's shape: batch, sequence, model width, heads, feed-forward width.
struct W6Shape {
  int n = 8, s = 128, e = 256, h = 4, ff = 1024;
  /// Flops of the layer's products: QKV, scores, weighted sums, output projection, two FF layers.
  [[nodiscard]] double gflop() const {
    const double rows = double(n) * s;
    return 2.0 * (rows * e * 3 * e + 2.0 * n * s * s * e + rows * e * e + 2.0 * rows * e * ff) / 1e9;
  }
};

/// Operands and results of the products, filled before any timing.
struct W6Products {
  W6Shape sh;
  std::vector<float> x, w_in, w_out, w1, w2, qkv, scores, heads, attn, hidden, out;
  W6Products(std::vector<float> x_, std::vector<float> w_in_, std::vector<float> w_out_, std::vector<float> w1_,
             std::vector<float> w2_)
      : x(std::move(x_)), w_in(std::move(w_in_)), w_out(std::move(w_out_)), w1(std::move(w1_)), w2(std::move(w2_)),
        qkv(std::size_t(sh.n) * sh.s * 3 * sh.e), scores(std::size_t(sh.s) * sh.s),
        heads(std::size_t(sh.n) * sh.s * sh.e), attn(heads.size()), hidden(std::size_t(sh.n) * sh.s * sh.ff),
        out(heads.size()) {}

  /// c = a w^T, a [rows, k] (row stride lda), w [cols, k]: a Linear without bias.
  static void linear(const float* a, int lda, const float* w, float* c, int rows, int k, int cols) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, k, 1.0f, a, lda, w, k, 0.0f, c, cols);
  }

  void run() {
    const int rows = sh.n * sh.s, e = sh.e, d = sh.e / sh.h, ld = 3 * e;
    linear(x.data(), e, w_in.data(), qkv.data(), rows, e, 3 * e);
    for (int b = 0; b < sh.n; ++b)
      for (int h = 0; h < sh.h; ++h) {
        const float* q = qkv.data() + std::size_t(b) * sh.s * ld + std::size_t(h) * d;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sh.s, sh.s, d, 1.0f, q, ld, q + e, ld, 0.0f,
                    scores.data(), sh.s);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sh.s, d, sh.s, 1.0f, scores.data(), sh.s, q + 2 * e, ld,
                    0.0f, heads.data() + std::size_t(b) * sh.s * e + std::size_t(h) * d, e);
      }
    linear(heads.data(), e, w_out.data(), attn.data(), rows, e, e);
    linear(attn.data(), e, w1.data(), hidden.data(), rows, e, sh.ff);
    linear(hidden.data(), sh.ff, w2.data(), out.data(), rows, sh.ff, e);
  }
};

}  // namespace bench
#endif

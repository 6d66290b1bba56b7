// A program that knows nothing of the profiler, for the LT_PROFILE test (profiler_test.cpp):
// five training-like steps, each a product, an activation and a reduction, then a read of
// the step's result.
#include <cstdio>

#include <lazytensor/lazytensor.hpp>

int main() {
  lt::Tensor x = lt::full({32, 16}, 0.5f, lt::device()), w = lt::full({16, 8}, 0.125f, lt::device());
  float total = 0;
  for (int step = 0; step < 5; ++step) {
    lt::Tensor h = x.matmul(w).tanh();
    w = w - 0.01f * (h.sum(0) * 0.5f);
    lt::sync();
    total += w.to_vector<float>()[0];
  }
  std::printf("%f\n", static_cast<double>(total));
}

// The first steps with lazytensor: tensors on the lazy device, a barrier, a Linear layer
// written as matmul + bias, the device-mismatch error, and the metrics report.
#include <iostream>

#include <lazytensor/lazytensor.hpp>

int main() {
  lt::manual_seed(0);
  auto dev = lt::device();
  std::cout << "lazy device: " << dev << "\n\n";

  // Ops on the lazy device are recorded; printing needs the values, so it runs the graph.
  lt::Tensor t = lt::randn({2, 2}, dev);
  std::cout << "t =\n" << t << "\n\n";

  lt::Tensor t0 = lt::randn({2, 2}, dev);
  lt::Tensor t1 = lt::randn({2, 2}, dev);
  lt::Tensor sum = t0 + t1;
  lt::Tensor product = t0.mm(t1);
  std::cout << "pending graph of t0 + t1 and t0.mm(t1):\n" << lt::debug::ir_text({sum, product});
  lt::sync();  // the barrier: both results are computed together
  std::cout << "t0 + t1 =\n" << sum << "\n\nt0.mm(t1) =\n" << product << "\n\n";

  // A Linear layer 10 -> 20 as matmul + bias, on the lazy device.
  lt::Tensor weight = lt::randn({20, 10}, dev) * 0.1f;
  lt::Tensor bias = lt::zeros({20}, dev);
  lt::Tensor l_in = lt::randn({10}, dev);
  lt::Tensor l_out = lt::linear(l_in, weight, bias);
  std::cout << "linear(l_in) =\n" << l_out << "\n\n";

  // Mixing devices is an error that names the op and both devices; nothing is recorded.
  lt::Tensor cpu_weight = lt::randn({20, 10});
  try {
    lt::linear(l_in, cpu_weight);
  } catch (const lt::Error& e) {
    std::cout << "expected error: " << e.what() << "\n\n";
  }

  // A shape-static loop with one barrier per step.
  lt::Tensor x = lt::ones({4}, dev);
  for (int step = 0; step < 5; ++step) {
    x = lt::relu(x * 1.5f - 0.25f);
    lt::mark_step();
  }
  std::cout << "after 5 steps x =\n" << x << "\n\n";

  std::cout << "metrics report:\n" << lt::metrics::report();
  return 0;
}

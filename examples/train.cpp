// Training with autograd on the lazy device: a 2-32-3 MLP learns to tell three Gaussian blobs
// apart. Each step traces forward, backward and the SGD update; the barrier runs them as one
// graph, and nothing is computed before it.
//
//   train [--steps N]
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include <lazytensor/lazytensor.hpp>

int main(int argc, char** argv) {
  int steps = 200;
  for (int k = 1; k + 1 < argc; ++k)
    if (std::strcmp(argv[k], "--steps") == 0) steps = std::atoi(argv[k + 1]);

  auto dev = lt::device();
  lt::manual_seed(0);
  // Three blobs of 64 points around (-2, 0), (2, 0) and (0, 3), their class as target.
  const std::int64_t per_class = 64, n = 3 * per_class;
  std::vector<float> centers = {-2, 0, 2, 0, 0, 3};
  std::vector<std::int64_t> labels;
  for (std::int64_t c = 0; c < 3; ++c) labels.insert(labels.end(), per_class, c);
  lt::Tensor center = lt::from_vector(centers, {3, 2}).index_select(0, lt::from_vector(labels));
  lt::Tensor x = (center + lt::randn({n, 2})).eval().to(dev);
  lt::Tensor target = lt::from_vector(labels, {n, 1}, dev);

  lt::Tensor w1 = (lt::randn({32, 2}, dev) * 0.5).eval().requires_grad_(), b1 = lt::zeros({32}, dev).requires_grad_();
  lt::Tensor w2 = (lt::randn({3, 32}, dev) * 0.2).eval().requires_grad_(), b2 = lt::zeros({3}, dev).requires_grad_();
  std::vector<lt::Tensor> params = {w1, b1, w2, b2};

  lt::metrics::reset();
  for (int step = 1; step <= steps; ++step) {
    for (lt::Tensor& p : params) p.mutable_grad() = {};  // zero_grad
    lt::Tensor logits = lt::linear(lt::relu(lt::linear(x, w1, b1)), w2, b2);
    lt::Tensor loss = -lt::log_softmax(logits, 1).gather(1, target).mean();  // negative log-likelihood
    loss.backward();
    {
      lt::no_grad guard;  // the update is not part of the history
      for (lt::Tensor& p : params) p -= p.grad() * 0.2;
    }
    lt::sync();
    if (step % 50 == 0 || step == 1) {
      lt::no_grad guard;
      double accuracy = (logits.argmax(1, true) == target).eval().to(lt::f32).mean().item<float>();
      std::cout << "step " << step << "  loss " << loss.item<float>() << "  accuracy " << accuracy << '\n';
    }
  }
  std::cout << "barriers " << lt::metrics::counter("MarkStep") << ", graphs run " << lt::metrics::counter("UncachedCompile")
            << " (one per step, plus the accuracy reads)\n";
}

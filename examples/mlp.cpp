// A model written as a C++ template with static shapes: Mlp<784, 1024, 1024, 10>. Every layer's
// shapes are checked when the program compiles (wire a layer to the wrong input and it does
// not build), and the activations stay fused expressions between the matmuls. The loop is a
// shape-static inference loop: one graph, traced again each step, run at each barrier.
//
//   mlp [--steps N] [--batch-eager]
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <lazytensor/lazytensor.hpp>

template <std::int64_t In, std::int64_t Hidden1, std::int64_t Hidden2, std::int64_t Out>
class Mlp {
 public:
  explicit Mlp(lt::Device device)
      : w1_(init<Hidden1, In>(device)), b1_(lt::zeros({Hidden1}, device)),
        w2_(init<Hidden2, Hidden1>(device)), b2_(lt::zeros({Hidden2}, device)),
        w3_(init<Out, Hidden2>(device)), b3_(lt::zeros({Out}, device)) {}

  /// Logits for a batch; the batch size is part of the type too.
  template <std::int64_t Batch>
  lt::FixedTensor<Batch, Out> forward(const lt::FixedTensor<Batch, In>& x) const {
    lt::FixedTensor<Batch, Hidden1> h1 = lt::relu(lt::linear(x, w1_, b1_));
    lt::FixedTensor<Batch, Hidden2> h2 = lt::relu(lt::linear(h1, w2_, b2_));
    return lt::linear(h2, w3_, b3_);
  }

 private:
  /// Kaiming-uniform-like initialisation, as nn.Linear's default scale.
  template <std::int64_t Rows, std::int64_t Cols>
  static lt::FixedTensor<Rows, Cols> init(lt::Device device) {
    float bound = 1.0f / std::sqrt(static_cast<float>(Cols));
    return lt::FixedTensor<Rows, Cols>(lt::rand({Rows, Cols}, device) * (2 * bound) - bound);
  }

  lt::FixedTensor<Hidden1, In> w1_;
  lt::FixedTensor<Hidden1> b1_;
  lt::FixedTensor<Hidden2, Hidden1> w2_;
  lt::FixedTensor<Hidden2> b2_;
  lt::FixedTensor<Out, Hidden2> w3_;
  lt::FixedTensor<Out> b3_;
};

int main(int argc, char** argv) {
  int steps = 20;
  for (int k = 1; k < argc; ++k)
    if (std::strcmp(argv[k], "--steps") == 0 && k + 1 < argc) steps = std::atoi(argv[++k]);

  constexpr std::int64_t batch = 64;
  lt::manual_seed(0);
  auto device = lt::device();
  Mlp<784, 1024, 1024, 10> model(device);
  lt::sync();  // the parameters are device data from here on

  auto start = std::chrono::steady_clock::now();
  double checksum = 0;
  for (int step = 0; step < steps; ++step) {
    lt::FixedTensor<batch, 784> x(lt::randn({batch, 784}, device));
    lt::FixedTensor<batch, 10> logits = model.forward(x);
    lt::FixedTensor<batch> best = lt::amax<1>(logits);
    lt::sync();
    checksum += lt::Tensor(best).sum().item<float>();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::cout << "Mlp<784, 1024, 1024, 10>, batch " << batch << ": " << steps << " steps, "
            << 1e3 * seconds / steps << " ms per step (checksum " << checksum << ")\n\n"
            << lt::metrics::report();
}

// A model written as a template, with its second layer wired to the wrong activation: the
// model does not build, and the message names the layer's op and both shapes.
// expect: static assertion failed: lt::linear: the input's last extent differs from the weight's in_features
// expect: lt::extents<32, 784>
// expect: lt::extents<256, 512>
#include <lazytensor/lazytensor.hpp>

template <std::int64_t In, std::int64_t H1, std::int64_t H2, std::int64_t Out>
struct Mlp {
  lt::FixedTensor<H1, In> w1;
  lt::FixedTensor<H2, H1> w2;
  lt::FixedTensor<Out, H2> w3;

  template <std::int64_t Batch>
  auto forward(const lt::FixedTensor<Batch, In>& x) const {
    auto h1 = lt::relu(lt::linear(x, w1));
    auto h2 = lt::relu(lt::linear(x, w2));  // mis-wired: takes x instead of h1
    return lt::linear(h2, w3);
  }
};

lt::Tensor misuse(const Mlp<784, 512, 256, 10>& model, const lt::FixedTensor<32, 784>& x) { return model.forward(x); }

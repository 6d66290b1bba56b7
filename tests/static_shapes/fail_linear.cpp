// A linear layer whose weight does not take the input's features.
// expect: static assertion failed: lt::linear: the input's last extent differs from the weight's in_features
// expect: lt::extents<8, 784>
// expect: lt::extents<100, 785>
#include <lazytensor/lazytensor.hpp>

lt::Tensor misuse(const lt::FixedTensor<8, 784>& x, const lt::FixedTensor<100, 785>& w) { return lt::linear(x, w); }

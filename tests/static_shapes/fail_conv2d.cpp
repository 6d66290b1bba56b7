// A convolution whose weight expects other input channels.
// expect: static assertion failed: lt::conv2d: the input's channels differ from the weight's in_channels times groups
// expect: lt::extents<2, 3, 10, 10>
// expect: lt::extents<4, 2, 3, 3>
#include <lazytensor/lazytensor.hpp>

lt::Tensor misuse(const lt::FixedTensor<2, 3, 10, 10>& x, const lt::FixedTensor<4, 2, 3, 3>& w) {
  return lt::conv2d(x, w);
}

// Adding shapes that do not broadcast.
// expect: static assertion failed: lt elementwise op: the two shapes do not broadcast
// expect: lt::binary::add
// expect: lt::extents<2, 3>
// expect: lt::extents<4>
#include <lazytensor/lazytensor.hpp>

lt::Tensor misuse(const lt::FixedTensor<2, 3>& a, const lt::FixedTensor<4>& b) { return a + b; }

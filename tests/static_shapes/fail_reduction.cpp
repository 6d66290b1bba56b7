// A reduction over a dim the shape does not have.
// expect: static assertion failed: lt reduction: the dim is out of range for the shape
// expect: reduce<lt::reduction::sum, lt::extents<8, 100>, 2, false>
#include <lazytensor/lazytensor.hpp>

lt::Tensor misuse(const lt::FixedTensor<8, 100>& x) { return lt::sum<2>(x); }

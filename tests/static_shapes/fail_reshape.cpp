// A reshape to a shape of another element count.
// expect: static assertion failed: lt::reshape: the shapes hold different numbers of elements
// expect: lt::extents<8, 100>
// expect: lt::extents<3, 7>
#include <lazytensor/lazytensor.hpp>

lt::Tensor misuse(const lt::FixedTensor<8, 100>& x) { return lt::reshape<3, 7>(x); }

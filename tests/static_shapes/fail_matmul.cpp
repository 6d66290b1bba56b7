// A matmul whose inner extents differ.
// expect: static assertion failed: lt::matmul: the inner extents of the two shapes differ
// expect: lt::extents<64, 784>
// expect: lt::extents<100, 10>
#include <lazytensor/lazytensor.hpp>

lt::Tensor misuse(const lt::FixedTensor<64, 784>& a, const lt::FixedTensor<100, 10>& b) { return lt::matmul(a, b); }

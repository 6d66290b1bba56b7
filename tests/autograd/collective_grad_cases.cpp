// Gradient cases of the collectives in a world of one replica, where each passes its input's
// gradient through. Several replicas are tested in tests/distributed.
#include <lazytensor/distributed.hpp>

#include "gradcheck.hpp"

namespace lt::test {

LT_GRAD_TEST(all_reduce) {
  return {{"sum", {var({3, 4}, 1)}, [](const std::vector<Tensor>& in) { return all_reduce(ReduceOp::sum, in[0]); }},
          {"mean, scaled", {var({5}, 2)}, [](const std::vector<Tensor>& in) { return all_reduce(ReduceOp::mean, in[0], 3.0); }}};
}
LT_GRAD_TEST(all_gather) {
  return {{"dim 1", {var({2, 3}, 3)}, [](const std::vector<Tensor>& in) { return all_gather(in[0], 1) * 2.0; }}};
}
LT_GRAD_TEST(reduce_scatter) {
  return {{"sum dim 0", {var({4, 2}, 4)}, [](const std::vector<Tensor>& in) { return reduce_scatter(ReduceOp::sum, in[0], 0); }}};
}
LT_GRAD_TEST(broadcast) {
  return {{"root 0", {var({3}, 5)}, [](const std::vector<Tensor>& in) { return broadcast(in[0], 0); }}};
}

}  // namespace lt::test

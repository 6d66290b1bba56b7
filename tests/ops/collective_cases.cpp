// Reference cases of the collectives in a world of one replica (outside lt::launch), where
// each gives back its input: the op-table driver checks them like any op. Several replicas are
// tested in tests/distributed.
#include <lazytensor/distributed.hpp>

#include "op_harness.hpp"

namespace lt::test {

namespace {
Ref identity_ref(std::vector<std::int64_t> shape, DType t, std::uint32_t seed) {
  return t == DType::f32 || t == DType::f64 ? random_ref(shape, t, seed) : random_ref(shape, t, seed, -40, 40);
}
}  // namespace

LT_OP_TEST(all_reduce) {
  Ref x = identity_ref({3, 5}, DType::f32, 41), xi = identity_ref({7}, DType::i64, 42);
  return {{"sum f32", {x}, [](const std::vector<Tensor>& in) { return all_reduce(ReduceOp::sum, in[0]); }, x},
          {"max i64", {xi}, [](const std::vector<Tensor>& in) { return all_reduce(ReduceOp::max, in[0]); }, xi},
          {"mean scales by 1 / world", {x}, [](const std::vector<Tensor>& in) { return all_reduce(ReduceOp::mean, in[0], 2.0); },
           ref_map(DType::f32, [](auto& a) { return a[0] * 2.0; }, {x})}};
}

LT_OP_TEST(all_gather) {
  Ref x = identity_ref({2, 3, 4}, DType::f64, 43), b = identity_ref({5}, DType::i32, 44);
  return {{"dim 1 f64", {x}, [](const std::vector<Tensor>& in) { return all_gather(in[0], 1); }, x},
          {"dim -1 i32", {b}, [](const std::vector<Tensor>& in) { return all_gather(in[0], -1); }, b}};
}

LT_OP_TEST(reduce_scatter) {
  Ref x = identity_ref({4, 6}, DType::f32, 45);
  return {{"sum dim 0", {x}, [](const std::vector<Tensor>& in) { return reduce_scatter(ReduceOp::sum, in[0], 0); }, x},
          {"min dim 1", {x}, [](const std::vector<Tensor>& in) { return reduce_scatter(ReduceOp::min, in[0], 1); }, x}};
}

LT_OP_TEST(broadcast) {
  Ref x = identity_ref({3, 2}, DType::i32, 46);
  return {{"root 0", {x}, [](const std::vector<Tensor>& in) { return broadcast(in[0], 0); }, x}};
}

}  // namespace lt::test

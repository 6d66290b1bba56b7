// Reference cases of the leaf ops: device data, C++ scalars and the dtype cast.
#include "op_harness.hpp"

namespace lt::test {

LT_OP_TEST(device_data) {
  Ref x = random_ref({2, 3}, DType::f32, 11);
  return {{"round trip f32", {x}, [](const std::vector<Tensor>& in) { return in[0]; }, x},
          {"round trip i64", {random_ref({4}, DType::i64, 12, -50, 50)},
           [](const std::vector<Tensor>& in) { return in[0]; }, random_ref({4}, DType::i64, 12, -50, 50)},
          {"size 0", {random_ref({0, 3})}, [](const std::vector<Tensor>& in) { return in[0]; }, random_ref({0, 3})}};
}

LT_OP_TEST(scalar) {
  Ref x = random_ref({3}, DType::f32, 13);
  Ref xi = random_ref({3}, DType::i32, 14, -9, 9);
  return {{"f32 tensor + float scalar stays f32", {x}, [](const std::vector<Tensor>& in) { return in[0] + 2.5; },
           ref_map(DType::f32, [](auto& a) { return a[0] + 2.5; }, {x})},
          {"i32 tensor * int scalar stays i32", {xi}, [](const std::vector<Tensor>& in) { return in[0] * 3; },
           ref_map(DType::i32, [](auto& a) { return a[0] * 3; }, {xi})},
          {"i32 tensor * float scalar becomes f32", {xi}, [](const std::vector<Tensor>& in) { return in[0] * 0.5; },
           ref_map(DType::f32, [](auto& a) { return a[0] * 0.5; }, {xi})}};
}

LT_OP_TEST(cast) {
  Ref x = values_ref({6}, DType::f32, {-2.75, -0.5, 0.0, 0.5, 2.25, 7.0});
  Ref xi = random_ref({2, 3}, DType::i64, 15, -100, 100);
  auto to = [](DType t) { return [t](const std::vector<Tensor>& in) { return in[0].to(t); }; };
  return {{"f32 to i32 truncates", {x}, to(DType::i32), ref_map(DType::i32, [](auto& a) { return std::trunc(a[0]); }, {x})},
          {"f32 to bool", {x}, to(DType::boolean), ref_map(DType::boolean, [](auto& a) { return a[0] != 0; }, {x})},
          {"f32 to f64", {x}, to(DType::f64), ref_map(DType::f64, [](auto& a) { return a[0]; }, {x})},
          {"i64 to f32", {xi}, to(DType::f32), ref_map(DType::f32, [](auto& a) { return a[0]; }, {xi})},
          {"same dtype", {x}, to(DType::f32), x},
          {"specials to f64", {special_ref()}, to(DType::f64), ref_map(DType::f64, [](auto& a) { return a[0]; }, {special_ref()})}};
}

}  // namespace lt::test

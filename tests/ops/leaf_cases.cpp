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
  Ref xi = random_ref({2, 3}, DType::i64, 15, -400, 400);
  // Halfway between two bf16 values (both ways to even), just off halfway, the largest f32
  // (beyond bf16's largest: inf), and f32 subnormals.
  const double h = std::ldexp(1.0, -8);
  Ref halfway = values_ref({10}, DType::f32, {1 + h, 1 + 3 * h, -(1 + h), 1 + h + std::ldexp(1.0, -20), 3 - std::ldexp(1.0, -22),
                                       static_cast<double>(std::numeric_limits<float>::max()), 0.1, 1e-40,
                                       std::ldexp(1.0, -133) * 1.5, -1e-39});
  auto to = [](DType t) { return [t](const std::vector<Tensor>& in) { return in[0].to(t); }; };
  return {{"f32 to i32 truncates", {x}, to(DType::i32), ref_map(DType::i32, [](auto& a) { return std::trunc(a[0]); }, {x})},
          {"f32 to bool", {x}, to(DType::boolean), ref_map(DType::boolean, [](auto& a) { return a[0] != 0; }, {x})},
          {"f32 to f64", {x}, to(DType::f64), ref_map(DType::f64, [](auto& a) { return a[0]; }, {x})},
          {"i64 to f32", {xi}, to(f32_stands_for()), ref_map(DType::f32, [](auto& a) { return a[0]; }, {xi})},
          {"same dtype", {x}, to(f32_stands_for()), x},
          {"f32 to bf16 rounds to nearest even", {halfway}, to(DType::bf16), ref_map(DType::bf16, [](auto& a) { return a[0]; }, {halfway})},
          {"bf16 to f64 is exact", {halfway}, [](const std::vector<Tensor>& in) { return in[0].to(DType::bf16).to(DType::f64); },
           ref_map(DType::f64, [](auto& a) { return round_bf16(a[0]); }, {halfway})},
          {"i64 to bf16", {xi}, to(DType::bf16), ref_map(DType::bf16, [](auto& a) { return a[0]; }, {xi})},
          {"specials to bf16", {special_ref()}, to(DType::bf16), ref_map(DType::bf16, [](auto& a) { return a[0]; }, {special_ref()})},
          {"specials to f64", {special_ref()}, to(DType::f64), ref_map(DType::f64, [](auto& a) { return a[0]; }, {special_ref()})}};
}

}  // namespace lt::test

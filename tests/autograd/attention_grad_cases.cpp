// Gradient cases of the fused attention op, reached through scaled_dot_product_attention:
// q, k, v and an additive mask against finite differences.
#include <lazytensor/nn.hpp>

#include "gradcheck.hpp"

namespace lt::test {
namespace {

Tensor sdpa(const std::vector<Tensor>& in) {
  return nn::functional::scaled_dot_product_attention(in[0], in[1], in[2], in.size() > 3 ? std::optional<Tensor>(in[3]) : std::nullopt);
}

}  // namespace

LT_GRAD_TEST(attention) {
  return {{"q, k, v", {var({2, 3, 4}, 1), var({2, 5, 4}, 2), var({2, 5, 3}, 3)}, sdpa},
          {"one matrix", {var({3, 4}, 4), var({5, 4}, 5), var({5, 2}, 6)}, sdpa},
          {"an additive mask broadcast over the batch", {var({2, 3, 4}, 7), var({2, 5, 4}, 8), var({2, 5, 3}, 9), var({3, 5}, 10)}, sdpa},
          {"is_causal",
           {var({2, 4, 3}, 11), var({2, 4, 3}, 12), var({2, 4, 2}, 13)},
           [](const std::vector<Tensor>& in) {
             return nn::functional::scaled_dot_product_attention(in[0], in[1], in[2], std::nullopt, 0.0, true);
           }}};
}

}  // namespace lt::test

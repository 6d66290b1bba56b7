#pragma once
// PositionalEmbedding: a learned vector per position, added to a sequence of embeddings (GPT's
// wpe table).
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/movement.hpp"

namespace lt::nn {

/// Learned absolute positions, as GPT-2's position table (an Embedding over 0..L-1 for a
/// sequence of length L): `x + pos(x)` or `pos(x)` adds row t to the embedding at position t.
/// The first L rows are a narrow of the table, so the step records no index and its gradient
/// is a slice of the table's.
class PositionalEmbedding : public Callable<PositionalEmbedding> {
 public:
  /// A table of `max_positions` rows of `embedding_dim`, initialised N(0, std^2) (Hugging Face GPT-2's 0.02;
  /// PyTorch's Embedding would be 1). lt::Error for sizes that are not positive.
  PositionalEmbedding(std::int64_t max_positions, std::int64_t embedding_dim, double std = 0.02) {
    LT_CHECK(max_positions > 0 && embedding_dim > 0, "PositionalEmbedding: sizes must be positive, got ", max_positions,
             " x ", embedding_dim);
    weight = Tensor(randn({max_positions, embedding_dim}) * std);
    register_parameter("weight", weight);
  }

  /// x [*, L, embedding_dim] -> x plus the first L rows of the table, broadcast over the batch
  /// dims. lt::Error naming the shapes when L exceeds the table or the widths differ.
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    const Tensor operands[] = {x, weight};
    if (!x.defined()) op_error("PositionalEmbedding", operands, "an operand is undefined");
    if (x.dim() < 2 || x.size(-1) != weight.size(1))
      op_error("PositionalEmbedding", operands,
               ::lt::detail::concat("expected [*, L, ", weight.size(1), "], got ", x.shape().str()));
    return x + positions(x.size(-2), site);
  }

  /// The rows of positions 0..length-1, [length, embedding_dim]. lt::Error when `length` is
  /// not in 1..max_positions: a sequence longer than the table has no position to take.
  Tensor positions(std::int64_t length, Site site = Site::current()) const {
    RecordingSite at(site);
    if (length < 1 || length > weight.size(0))
      op_error("PositionalEmbedding", {&weight, 1},
               ::lt::detail::concat("a sequence of length ", length, " does not fit the positional table of ",
                                    weight.size(0), " positions ", weight.shape().str()));
    return narrow(weight, 0, 0, length);
  }

  /// The table, [max_positions, embedding_dim].
  Tensor weight;
};

}  // namespace lt::nn

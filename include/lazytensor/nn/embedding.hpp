#pragma once
// Embedding: a lookup table of num_embeddings vectors of size embedding_dim.
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/movement.hpp"

namespace lt::nn {

/// A lookup table of learned rows, as torch.nn.Embedding.
class Embedding : public Callable<Embedding> {
 public:
  /// Rows start as standard normal values, as in PyTorch.
  Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim) {
    LT_CHECK(num_embeddings > 0 && embedding_dim > 0, "Embedding: sizes must be positive, got ", num_embeddings, " x ",
             embedding_dim);
    weight = randn({num_embeddings, embedding_dim});
    register_parameter("weight", weight);
  }

  /// indices (i32 or i64, any shape) -> indices.shape + [embedding_dim]. An index out of range
  /// raises lt::Error (on a lazy device at the next barrier or read).
  Tensor forward(const Tensor& indices, Site site = Site::current()) const {
    RecordingSite at(site);
    return embedding(weight, indices);
  }

  /// The table, [num_embeddings, embedding_dim].
  Tensor weight;  // [num_embeddings, embedding_dim]
};

}  // namespace lt::nn

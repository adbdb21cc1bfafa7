#pragma once
// nn.Embedding: a lookup table of num_embeddings rows of embedding_dim values, N(0, 1) at first;
// the padding_idx row starts at zero and gets no gradient.

#include <optional>

#include "tensorplay/nn/module.h"

namespace tp::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  TP_ARG(int64_t, num_embeddings);
  TP_ARG(int64_t, embedding_dim);
  TP_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input);

  EmbeddingOptions options;
  Tensor weight;
};
TP_MODULE(Embedding);

}  // namespace tp::nn

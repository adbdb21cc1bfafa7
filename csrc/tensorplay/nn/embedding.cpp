#include "tensorplay/nn/embedding.h"

#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/nn/init.h"
#include "tensorplay/ops/ops.h"

namespace tp::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options_) : options(options_) {
  if (auto& idx = options.padding_idx(); idx) {
    const int64_t n = options.num_embeddings();
    TP_CHECK_VALUE(*idx < n && *idx >= -n, "Padding_idx must be within num_embeddings");
    if (*idx < 0) options.padding_idx(*idx + n);  // stored non-negative, as Python does
  }
  weight = register_parameter("weight", empty({options.num_embeddings(), options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    zero_(select(weight, 0, *options.padding_idx()));
  }
}

Tensor EmbeddingImpl::forward(const Tensor& input) { return embedding(input, weight, options.padding_idx()); }

}  // namespace tp::nn

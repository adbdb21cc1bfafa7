#pragma once
// The weight cache. A model reads each float32 weight once per op that uses it; under autocast
// every read would cast it again. The cache keeps the first cast for the rest of the region, for
// exactly the tensors where reuse is safe: leaves that require grad and are not views (weights).
// An entry is keyed by the tensor's identity, the target dtype and the grad mode (a cast made
// under no_grad has no graph, so it must not be reused once grad is on); it is dropped when the
// weight changes in place (its version moves on) and the whole cache is emptied when the
// outermost autocast region exits. The cache is per thread, like the rest of autocast's state.

#include <cstddef>

#include "tensorplay/core/tensor.h"

namespace tp::amp {

// Whether casting `t` to `dtype` may go through the cache.
bool cacheable(const Tensor& t, ScalarType dtype);

// `t` cast to `dtype`, from the cache when a valid entry exists (then *hit is set).
Tensor cached_cast(const Tensor& t, ScalarType dtype, bool* hit);

void clear_cache();
size_t cache_size();

}  // namespace tp::amp

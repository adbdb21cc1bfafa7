#pragma once
// The two fused ops behind tensorplay.amp.GradScaler, with PyTorch's names and contracts.

#include "tensorplay/core/tensor.h"

namespace tp {

// Multiplies every gradient by inv_scale in place (one pass each) and sets found_inf to 1 when
// any element of any gradient is inf or NaN. found_inf and inv_scale: one-element float32.
void amp_foreach_non_finite_check_and_unscale_(const TensorList& grads, const Tensor& found_inf,
                                               const Tensor& inv_scale);

// After a step: on inf/NaN the scale backs off and the count of clean steps restarts; after
// growth_interval clean steps in a row the scale grows (unless it would overflow). Updates
// scale (one float32) and growth_tracker (one int32) in place and returns scale.
Tensor amp_update_scale_(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                         double growth_factor, double backoff_factor, int64_t growth_interval);

}  // namespace tp

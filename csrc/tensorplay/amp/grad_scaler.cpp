#include "tensorplay/amp/grad_scaler.h"

#include <cmath>

#include "tensorplay/core/error.h"
#include "tensorplay/dispatch/backend.h"

namespace tp {

namespace {

void check_one_float(const char* op, const char* what, const Tensor& t) {
  TP_CHECK(t.numel() == 1, "[", op, "] ", what, " must be a one-element tensor, got shape ", to_string(t.sizes()));
  TP_CHECK(t.dtype() == ScalarType::Float32, "[", op, "] ", what, " must be a float32 tensor, got ", name(t.dtype()));
}

}  // namespace

void amp_foreach_non_finite_check_and_unscale_(const TensorList& grads, const Tensor& found_inf,
                                               const Tensor& inv_scale) {
  constexpr const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  check_one_float(op, "found_inf", found_inf);
  check_one_float(op, "inv_scale", inv_scale);
  TP_CHECK(inv_scale.device() == found_inf.device(), "[", op, "] inv_scale is on ", inv_scale.device().str(),
           " but found_inf is on ", found_inf.device().str());
  for (const Tensor& g : grads) {
    TP_CHECK(g.device() == found_inf.device(), "[", op, "] a gradient is on ", g.device().str(),
             " but found_inf is on ", found_inf.device().str());
    TP_CHECK(g.is_floating_point(), "[", op, "] gradients must be floating point, got ", name(g.dtype()));
    // An expanded gradient would be scaled once per alias of each element.
    for (int64_t d = 0; d < g.dim() && g.numel() > 0; ++d)
      TP_CHECK(g.stride(d) != 0 || g.size(d) <= 1, "[", op,
               "] unsupported operation: more than one element of the "
               "written-to tensor refers to a single memory location. Please clone() the tensor before performing "
               "the operation.");
  }
  for (const Tensor& g : grads) {
    if (g.numel() == 0) continue;
    backend(g.device()).unscale_and_check_finite(g, found_inf, inv_scale);
    g.bump_version();
  }
  found_inf.bump_version();
}

Tensor amp_update_scale_(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                         double growth_factor, double backoff_factor, int64_t growth_interval) {
  constexpr const char* op = "_amp_update_scale_";
  check_one_float(op, "scale", scale);
  check_one_float(op, "found_inf", found_inf);
  TP_CHECK(growth_tracker.numel() == 1 && growth_tracker.dtype() == ScalarType::Int32, "[", op,
           "] growth_tracker must be a one-element int32 tensor");
  TP_CHECK(scale.device().is_cpu() && growth_tracker.device().is_cpu() && found_inf.device().is_cpu(), "[", op,
           "] expected CPU tensors");
  float& s = *scale.data_ptr<float>();
  int32_t& clean_steps = *growth_tracker.data_ptr<int32_t>();
  if (*found_inf.data_ptr<float>() != 0) {
    s = static_cast<float>(s * backoff_factor);
    clean_steps = 0;
  } else if (clean_steps + 1 == growth_interval) {
    const auto grown = static_cast<float>(s * growth_factor);
    if (std::isfinite(grown)) s = grown;
    clean_steps = 0;
  } else {
    ++clean_steps;
  }
  scale.bump_version();
  growth_tracker.bump_version();
  return scale;
}

}  // namespace tp

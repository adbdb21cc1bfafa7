#pragma once
// Which dtype each op runs in under autocast: one line per op, one column per device type.
// This table is the single source: the autocast layer reads it, `tensorplay.amp.policy_table()`
// prints it, and docs/autocast.md's table is written from it (`make docs`). The lists follow PyTorch's
// (aten/src/ATen/autocast_mode.cpp); an op PyTorch lists for neither device runs in its
// inputs' dtype, unless PyTorch implements it as a composite of listed ops (einsum on CPU is
// bmm underneath, which autocast casts): then ours is Composite and its pieces cast as theirs do.

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "tensorplay/core/device.h"

namespace tp::amp {

enum class Policy : uint8_t {
  InputDtype,          // no casts: the op runs in its inputs' dtype (PyTorch's fallthrough)
  LowerPrecision,      // floating inputs cast to the autocast dtype: matmuls and convolutions
  Float32,             // floating inputs cast to float32: ops whose accuracy needs the range
  Float32UnlessDtype,  // float32, unless the caller chose the output dtype (sum(x, dtype=...))
  Promote,             // floating inputs cast to the widest among them
  Banned,              // raises: the op is unsafe under autocast on this device
  Composite,           // no casts of its own: the ops it is made of follow their own policies
};

// clang-format off
#define TP_AUTOCAST_OPS(_)                                                         \
  /* op                               CPU                 CUDA */                  \
  /* matmuls and convolutions: the work that lower precision speeds up */          \
  _(conv1d,                           LowerPrecision,     LowerPrecision)          \
  _(conv2d,                           LowerPrecision,     LowerPrecision)          \
  _(conv_transpose2d,                 LowerPrecision,     LowerPrecision)          \
  _(conv_transpose1d,                 LowerPrecision,     LowerPrecision)          \
  _(mm,                               LowerPrecision,     LowerPrecision)          \
  _(bmm,                              LowerPrecision,     LowerPrecision)          \
  _(addmm,                            LowerPrecision,     LowerPrecision)          \
  _(baddbmm,                          LowerPrecision,     LowerPrecision)          \
  _(addbmm,                           LowerPrecision,     LowerPrecision)          \
  _(linalg_vecdot,                    LowerPrecision,     LowerPrecision)          \
  _(matmul,                           LowerPrecision,     LowerPrecision)          \
  _(linear,                           LowerPrecision,     LowerPrecision)          \
  _(prelu,                            LowerPrecision,     LowerPrecision)          \
  _(scaled_dot_product_attention,     LowerPrecision,     LowerPrecision)          \
  _(mv,                               InputDtype,         LowerPrecision)          \
  _(addmv,                            InputDtype,         LowerPrecision)          \
  _(addr,                             InputDtype,         LowerPrecision)          \
  _(einsum,                           Composite,          LowerPrecision)          \
  _(linalg_multi_dot,                 Composite,          LowerPrecision)          \
  _(rnn_tanh_cell,                    Composite,          LowerPrecision)          \
  _(rnn_relu_cell,                    Composite,          LowerPrecision)          \
  _(lstm_cell,                        Composite,          LowerPrecision)          \
  _(gru_cell,                         Composite,          LowerPrecision)          \
  _(lstm_layer,                       LowerPrecision,     LowerPrecision)          \
  /* accuracy-sensitive: float32 */                                                \
  _(exp,                              InputDtype,         Float32)                 \
  _(expm1,                            InputDtype,         Float32)                 \
  _(log,                              InputDtype,         Float32)                 \
  _(log10,                            InputDtype,         Float32)                 \
  _(log2,                             InputDtype,         Float32)                 \
  _(log1p,                            InputDtype,         Float32)                 \
  _(reciprocal,                       InputDtype,         Float32)                 \
  _(rsqrt,                            InputDtype,         Float32)                 \
  _(tan,                              InputDtype,         Float32)                 \
  _(acos,                             InputDtype,         Float32)                 \
  _(asin,                             InputDtype,         Float32)                 \
  _(cosh,                             InputDtype,         Float32)                 \
  _(sinh,                             InputDtype,         Float32)                 \
  _(erfinv,                           InputDtype,         Float32)                 \
  _(pow,                              InputDtype,         Float32)                 \
  _(softplus,                         InputDtype,         Float32)                 \
  _(layer_norm,                       InputDtype,         Float32)                 \
  _(group_norm,                       InputDtype,         Float32)                 \
  _(logsumexp,                        InputDtype,         Float32)                 \
  _(interpolate,                      InputDtype,         Float32)                 \
  _(cosine_similarity,                InputDtype,         Float32)                 \
  _(dist,                             InputDtype,         Float32)                 \
  _(pdist,                            InputDtype,         Float32)                 \
  _(cdist,                            Float32,            Float32)                 \
  _(renorm,                           InputDtype,         Float32)                 \
  _(trace,                            Float32,            InputDtype)              \
  _(reflection_pad,                   Float32,            InputDtype)              \
  _(replication_pad,                  Float32,            InputDtype)              \
  _(prod,                             Float32,            Float32UnlessDtype)      \
  _(sum,                              InputDtype,         Float32UnlessDtype)      \
  _(cumsum,                           InputDtype,         Float32UnlessDtype)      \
  _(cumprod,                          InputDtype,         Float32UnlessDtype)      \
  _(softmax,                          InputDtype,         Float32UnlessDtype)      \
  _(log_softmax,                      InputDtype,         Float32UnlessDtype)      \
  _(norm,                             InputDtype,         Float32UnlessDtype)      \
  _(linalg_vector_norm,               InputDtype,         Float32UnlessDtype)      \
  _(linalg_matrix_norm,               InputDtype,         Float32UnlessDtype)      \
  /* losses */                                                                     \
  _(mse_loss,                         Float32,            Float32)                 \
  _(l1_loss,                          Float32,            Float32)                 \
  _(smooth_l1_loss,                   Float32,            Float32)                 \
  _(huber_loss,                       Float32,            Float32)                 \
  _(nll_loss,                         Float32,            Float32)                 \
  _(cross_entropy,                    Float32,            Float32)                 \
  _(binary_cross_entropy,             Float32,            Banned)                  \
  _(binary_cross_entropy_with_logits, Float32,            Float32)                 \
  _(kl_div,                           Float32,            Float32)                 \
  /* multi-input ops: the widest floating input decides */                         \
  _(cat,                              Promote,            InputDtype)              \
  _(stack,                            Promote,            InputDtype)              \
  _(index_copy,                       Promote,            InputDtype)              \
  _(addcmul,                          InputDtype,         Promote)                 \
  _(addcdiv,                          InputDtype,         Promote)                 \
  _(atan2,                            InputDtype,         Promote)                 \
  _(bilinear,                         InputDtype,         Promote)                 \
  _(dot,                              InputDtype,         Promote)                 \
  _(vdot,                             InputDtype,         Promote)                 \
  _(cross,                            InputDtype,         Promote)                 \
  _(tensordot,                        Composite,          Promote)                 \
  _(index_put,                        InputDtype,         Promote)                 \
  _(scatter_add,                      InputDtype,         Promote)                 \
  /* the rest run in their inputs' dtype; listed so that trace() shows them */    \
  _(neg,                              InputDtype,         InputDtype)              \
  _(abs,                              InputDtype,         InputDtype)              \
  _(sign,                             InputDtype,         InputDtype)              \
  _(exp2,                             InputDtype,         InputDtype)              \
  _(sqrt,                             InputDtype,         InputDtype)              \
  _(sin,                              InputDtype,         InputDtype)              \
  _(cos,                              InputDtype,         InputDtype)              \
  _(atan,                             InputDtype,         InputDtype)              \
  _(tanh,                             InputDtype,         InputDtype)              \
  _(sigmoid,                          InputDtype,         InputDtype)              \
  _(erf,                              InputDtype,         InputDtype)              \
  _(floor,                            InputDtype,         InputDtype)              \
  _(ceil,                             InputDtype,         InputDtype)              \
  _(trunc,                            InputDtype,         InputDtype)              \
  _(round,                            InputDtype,         InputDtype)              \
  _(relu,                             InputDtype,         InputDtype)              \
  _(silu,                             InputDtype,         InputDtype)              \
  _(gelu,                             InputDtype,         InputDtype)              \
  _(nan_to_num,                       InputDtype,         InputDtype)              \
  _(clamp,                            InputDtype,         InputDtype)              \
  _(add,                              InputDtype,         InputDtype)              \
  _(sub,                              InputDtype,         InputDtype)              \
  _(rsub,                             InputDtype,         InputDtype)              \
  _(mul,                              InputDtype,         InputDtype)              \
  _(div,                              InputDtype,         InputDtype)              \
  _(floor_divide,                     InputDtype,         InputDtype)              \
  _(remainder,                        InputDtype,         InputDtype)              \
  _(maximum,                          InputDtype,         InputDtype)              \
  _(minimum,                          InputDtype,         InputDtype)              \
  _(lerp,                             InputDtype,         InputDtype)              \
  _(where,                            InputDtype,         InputDtype)              \
  _(mean,                             InputDtype,         InputDtype)              \
  _(var,                              InputDtype,         InputDtype)              \
  _(std,                              InputDtype,         InputDtype)              \
  _(amax,                             InputDtype,         InputDtype)              \
  _(amin,                             InputDtype,         InputDtype)              \
  _(max,                              InputDtype,         InputDtype)              \
  _(min,                              InputDtype,         InputDtype)              \
  _(sort,                             InputDtype,         InputDtype)              \
  _(topk,                             InputDtype,         InputDtype)              \
  _(kthvalue,                         InputDtype,         InputDtype)              \
  _(outer,                            InputDtype,         InputDtype)              \
  _(max_pool2d,                       InputDtype,         InputDtype)              \
  _(avg_pool2d,                       InputDtype,         InputDtype)              \
  _(adaptive_avg_pool2d,              InputDtype,         InputDtype)              \
  _(batch_norm,                       InputDtype,         InputDtype)              \
  _(dropout,                          InputDtype,         InputDtype)              \
  _(embedding,                        InputDtype,         InputDtype)              \
  _(bitwise_not,                     InputDtype,         InputDtype)              \
  _(logical_not,                     InputDtype,         InputDtype)              \
  _(isnan,                           InputDtype,         InputDtype)              \
  _(isinf,                           InputDtype,         InputDtype)              \
  _(isfinite,                        InputDtype,         InputDtype)              \
  _(bitwise_and,                     InputDtype,         InputDtype)              \
  _(bitwise_or,                      InputDtype,         InputDtype)              \
  _(bitwise_xor,                     InputDtype,         InputDtype)              \
  _(eq,                              InputDtype,         InputDtype)              \
  _(ne,                              InputDtype,         InputDtype)              \
  _(lt,                              InputDtype,         InputDtype)              \
  _(le,                              InputDtype,         InputDtype)              \
  _(gt,                              InputDtype,         InputDtype)              \
  _(ge,                              InputDtype,         InputDtype)              \
  _(logical_and,                     InputDtype,         InputDtype)              \
  _(logical_or,                      InputDtype,         InputDtype)              \
  _(logical_xor,                     InputDtype,         InputDtype)              \
  _(constant_pad_nd,                  InputDtype,         InputDtype)
// clang-format on

enum class Op : uint16_t {
#define TP_AUTOCAST_ENUM(op, cpu, cuda) op,
  TP_AUTOCAST_OPS(TP_AUTOCAST_ENUM)
#undef TP_AUTOCAST_ENUM
};
inline constexpr int kNumOps = 0
#define TP_AUTOCAST_COUNT(op, cpu, cuda) +1
    TP_AUTOCAST_OPS(TP_AUTOCAST_COUNT);
#undef TP_AUTOCAST_COUNT

std::string_view name(Op op);
std::string_view name(Policy policy);
// Op and policy names as Python spells them; unknown names raise a ValueError naming `caller`.
Op parse_op(std::string_view name, std::string_view caller);
Policy parse_policy(std::string_view name, std::string_view caller);

// The policy in force on this thread: a scoped override if one is active, else the table's.
Policy policy(Op op, DeviceType device);
Policy table_policy(Op op, DeviceType device);

// Replaces policies for this thread until destroyed (`tensorplay.amp.policy_override`).
class PolicyOverride {
 public:
  PolicyOverride(DeviceType device, const std::vector<std::pair<Op, Policy>>& policies);
  ~PolicyOverride();
  PolicyOverride(const PolicyOverride&) = delete;
  PolicyOverride& operator=(const PolicyOverride&) = delete;

 private:
  DeviceType device_;
  std::vector<std::pair<Op, std::optional<Policy>>> saved_;
};

}  // namespace tp::amp

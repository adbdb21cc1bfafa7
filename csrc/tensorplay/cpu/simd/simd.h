#pragma once
// Kernels written with Highway's SIMD operations (csrc/tensorplay/cpu/simd/*.cpp): each is compiled for
// every x86 target Highway knows and runs the best one this CPU has, chosen at run time, so a
// build on any machine runs AVX2 or AVX-512 code where the CPU has it.

#include <cstdint>

#include "tensorplay/core/half.h"

namespace tp::cpu::simd {

// Outputs of this many bytes and more (per call) are written past the cache: 64 MiB, for the
// reasons in streamed_stores.cpp. set_streamed_bytes returns the bound it replaces (the tests lower
// it to reach that code with small tensors).
int64_t streamed_bytes();
int64_t set_streamed_bytes(int64_t bytes);

// n contiguous 16-bit floats widened to float32 (exactly), and float32 rounded to them (to
// nearest even, NaN to NaN), as core/half.h converts one value.
void widen(const BFloat16* in, float* out, int64_t n);
void round_to(const float* in, BFloat16* out, int64_t n);
void widen(const Half* in, float* out, int64_t n);
void round_to(const float* in, Half* out, int64_t n);

// out = a op b over n contiguous float32 values, or bfloat16 ones computed in float32 (a + alpha b
// and a - alpha b for Add and Sub) and rounded once; b is a row or one float32 value. out may be
// a or b.
enum class Arith { Add, Sub, Mul, Div };
void arith_row(Arith op, const float* a, const float* b, float* out, int64_t n);
void arith_row(Arith op, const float* a, float b, float* out, int64_t n);
void arith_row(Arith op, const BFloat16* a, const BFloat16* b, BFloat16* out, int64_t n, float alpha);
void arith_row(Arith op, const BFloat16* a, float b, BFloat16* out, int64_t n);

// dst[i * dst_stride + j] = src[j * src_stride + i] for i < rows and j < cols: a matrix of 2- or
// 4-byte elements transposed (strides in elements). src and dst must not overlap.
void transpose(const uint16_t* src, int64_t src_stride, uint16_t* dst, int64_t dst_stride, int64_t rows, int64_t cols);
void transpose(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride, int64_t rows, int64_t cols);

// The sum of n contiguous floats (bfloat16 ones widened), in float32 vector lanes (so in another
// order than one by one). For a few hundred values; longer rows are split pairwise by the caller
// to keep the sum accurate.
float sum_row(const float* x, int64_t n);
float sum_row(const BFloat16* x, int64_t n);

// acc[i] += x[i] over n contiguous floats (bfloat16 ones widened): one row of a sum over rows.
void accumulate_row(float* acc, const float* x, int64_t n);
void accumulate_row(float* acc, const BFloat16* x, int64_t n);

// The position of the first largest (is_max) or smallest of n >= 1 contiguous values, or of the
// first NaN if there is one, as PyTorch's argmax and argmin choose.
int64_t arg_extremum_row(const float* x, int64_t n, bool is_max);
int64_t arg_extremum_row(const BFloat16* x, int64_t n, bool is_max);

// y = softmax(x) (or log_softmax) of n contiguous floats; x and y must not overlap. False, with
// y unspecified, for a row holding a NaN or an infinity: the scalar loop handles those exactly.
bool softmax_row(const float* x, float* y, int64_t n, bool log);
// The same over bfloat16, computed in float32 and rounded once; scratch holds n floats.
bool softmax_row(const BFloat16* x, BFloat16* y, float* scratch, int64_t n, bool log);

// y = (x - mean) / sqrt(var + eps) * w + b over n contiguous floats, the statistics those of the
// row (the variance biased); w and b may be null. y may be x.
void layer_norm_row(const float* x, float* y, int64_t n, const float* w, const float* b, float eps);

// y = relu(x) over n contiguous values: 0 where x < 0, else x (-0 and NaN stay); y may be x.
void relu_row(const float* x, float* y, int64_t n);
void relu_row(const BFloat16* x, BFloat16* y, int64_t n);

// out = 0 where y <= threshold, else g (relu's gradient, threshold 0) over n contiguous values;
// out may be g or y.
void threshold_backward_row(const float* g, const float* y, float* out, float threshold, int64_t n);
void threshold_backward_row(const BFloat16* g, const BFloat16* y, BFloat16* out, float threshold, int64_t n);

// y = exp(x), log(x), tanh(x), sigmoid(x) or silu(x) of n contiguous floats, within a few ULP of
// the exact result, and as std:: at the infinities and NaN; y may be x.
void exp_row(const float* x, float* y, int64_t n);
void log_row(const float* x, float* y, int64_t n);
void tanh_row(const float* x, float* y, int64_t n);
void sigmoid_row(const float* x, float* y, int64_t n);
void silu_row(const float* x, float* y, int64_t n);

// y = gelu(x) of n contiguous floats, exact or (tanh) the tanh approximation; y may be x.
void gelu_row(const float* x, float* y, int64_t n, bool tanh);

// out = g * gelu'(x) over n contiguous floats; out may be g or x.
void gelu_backward_row(const float* g, const float* x, float* out, int64_t n, bool tanh);

// The weight gradient of a convolution of one-channel images with stride 1 along rows (conv.cpp
// says when it runs): for each of `channels` output channels o, taps[o * R * S + r * S + s] +=
// sum over p, q of g[o][p][q] * x[p * stride_h - pad_h + r * dilation_h][q - pad_w + s * dilation_w]
// (inputs outside the image are 0), and bias[o] += the sum of g[o] where bias is not null. x is
// one [H, W] image, g its [channels, P, Q] output gradient.
struct SingleChannelConv {
  int64_t H, W, P, Q, R, S, stride_h, pad_h, pad_w, dilation_h, dilation_w;
};
void single_channel_weight_grad(const float* x, const float* g, int64_t channels, const SingleChannelConv& c,
                                double* taps, double* bias);
void single_channel_weight_grad(const BFloat16* x, const BFloat16* g, int64_t channels, const SingleChannelConv& c,
                                double* taps, double* bias);

// One output row of the 2x2 max pool with stride 2: output q's window is top[2q], top[2q + 1] and
// the same two of the next row, top + width, taken in that order (a larger value or a NaN wins).
// best[q] gets its value and best_at[q] its position in the plane, top[0] being at `row`; every
// position in the plane must fit int32 (the positions are stored as int32 or int64).
void max_pool_2x2_row(const float* top, int64_t width, int64_t row, int64_t n, float* best, int32_t* best_at);
void max_pool_2x2_row(const float* top, int64_t width, int64_t row, int64_t n, float* best, int64_t* best_at);
void max_pool_2x2_row(const BFloat16* top, int64_t width, int64_t row, int64_t n, BFloat16* best, int32_t* best_at);
void max_pool_2x2_row(const BFloat16* top, int64_t width, int64_t row, int64_t n, BFloat16* best, int64_t* best_at);

// Its gradient in one input row of width values, at plane position base: element x is g[x / 2]
// where at[x / 2] (window x / 2's maximum) is base + x, else 0 (also past the n windows).
void max_pool_2x2_backward_row(const float* g, const int32_t* at, int64_t base, int64_t n, int64_t width, float* row);
void max_pool_2x2_backward_row(const float* g, const int64_t* at, int64_t base, int64_t n, int64_t width, float* row);
void max_pool_2x2_backward_row(const BFloat16* g, const int32_t* at, int64_t base, int64_t n, int64_t width,
                               BFloat16* row);
void max_pool_2x2_backward_row(const BFloat16* g, const int64_t* at, int64_t base, int64_t n, int64_t width,
                               BFloat16* row);

// SGD with momentum over n contiguous floats (a parameter, its gradient and its momentum buffer),
// rounded as CpuBackend::sgd_momentum_step's op sequence is. The factors are in float32 as that
// sequence's ops hold them: weight_decay, momentum, 1 - dampening and -lr.
struct SgdMomentum {
  float weight_decay, momentum, keep, step;
  bool nesterov, maximize;
};
void sgd_momentum_row(float* param, const float* grad, float* buf, int64_t n, const SgdMomentum& o);

}  // namespace tp::cpu::simd

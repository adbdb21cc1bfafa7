// The weight gradient of a convolution over one-channel images (a grayscale network's first
// layer), in SIMD code compiled by Highway for each x86 target and dispatched at run time (see
// simd/softmax.cpp). Each weight w[o][r][s] gets the dot product of channel o's output gradient
// with the input image shifted by the tap (r, s), the image zero-padded once in float32 and kept
// in L1 across the channels. The sums run in float32 lanes per image and channel and add up in
// float64 across images.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/conv.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The dot products of the plane's output gradient with kTaps copies of the image, each `step`
// further on: consecutive taps of one kernel row, which share the gradient's loads.
template <int kTaps, class D>
HWY_INLINE void TapSums(D d, const float* grad, const float* in, int64_t step, int64_t vectors, float* sums) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<D> acc[kTaps];
  for (int k = 0; k < kTaps; ++k) acc[k] = hn::Zero(d);
  for (int64_t v = 0; v < vectors; ++v) {
    const auto g = hn::LoadU(d, grad + v * lanes);
    for (int k = 0; k < kTaps; ++k) acc[k] = hn::MulAdd(g, hn::LoadU(d, in + k * step + v * lanes), acc[k]);
  }
  for (int k = 0; k < kTaps; ++k) sums[k] = hn::GetLane(hn::SumOfLanes(d, acc[k]));
}

// Each tap's sum is one dot product over the whole plane: the output gradient is laid out at the
// image's pitch (the rows its windows start on, zeros past Q), so that tap (r, s) multiplies it
// with the padded image read from the tap's offset on, with no per-row bounds. The zeros meet
// image values outside the tap's windows, so an image holding an infinity or a NaN would turn them
// into NaNs: such an image takes the tap's valid terms one by one instead.
template <class T>
void SingleChannelWeightGrad(const T* x, const T* g, int64_t channels, const simd::SingleChannelConv& c, double* taps,
                             double* bias) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t width = c.W + 2 * c.pad_w, height = c.H + 2 * c.pad_h, pitch = c.stride_h * width;
  const int64_t length = (c.P - 1) * pitch + c.Q, vectors = (length + lanes - 1) / lanes;
  // The image in float32 with its padding as zeros, and one channel's output gradient at its
  // pitch. Rows go in whole vectors, whose lanes past a row's end hold zeros: they land in the
  // padding or on the next row's start, which is written after (a masked store costs more than a
  // row of 26 floats on Zen 3), and the buffers have a vector of slack for the last row's.
  thread_local std::vector<float> image_buffer, grad_buffer;
  image_buffer.assign(height * width + lanes, 0.0f);
  grad_buffer.assign(vectors * lanes + lanes, 0.0f);
  float* const image = image_buffer.data();
  float* const grad = grad_buffer.data();
  auto not_finite = hn::IsNaN(hn::Zero(d));  // no lane
  for (int64_t h = 0; h < c.H; ++h)
    for (int64_t i = 0; i < c.W; i += lanes) {
      const auto v = LoadRow(d, x + h * c.W + i, static_cast<size_t>(std::min(lanes, c.W - i)));
      not_finite = hn::Or(not_finite, hn::Not(hn::IsFinite(v)));
      hn::StoreU(v, d, image + (h + c.pad_h) * width + c.pad_w + i);
    }
  const bool finite = hn::AllFalse(d, not_finite);
  std::vector<float> sums(c.R * c.S);
  for (int64_t o = 0; o < channels; ++o) {
    const T* go = g + o * c.P * c.Q;
    for (int64_t p = 0; p < c.P; ++p)
      for (int64_t q = 0; q < c.Q; q += lanes) {
        const auto count = static_cast<size_t>(std::min(lanes, c.Q - q));
        hn::StoreU(LoadRow(d, go + p * c.Q + q, count), d, grad + p * pitch + q);
      }
    for (int64_t r = 0; r < c.R; ++r) {
      float* out = sums.data() + r * c.S;
      const float* in = image + r * c.dilation_h * width;
      if (!finite) {
        for (int64_t s = 0; s < c.S; ++s) {
          out[s] = 0;
          for (int64_t p = 0; p < c.P; ++p)
            for (int64_t q = 0; q < c.Q; ++q) out[s] += grad[p * pitch + q] * in[p * pitch + q + s * c.dilation_w];
        }
        continue;
      }
      for (int64_t s = 0; s < c.S; s += 4) {  // up to four taps of the row in one pass over the plane
        const float* from = in + s * c.dilation_w;
        switch (std::min<int64_t>(c.S - s, 4)) {
          case 4: TapSums<4>(d, grad, from, c.dilation_w, vectors, out + s); break;
          case 3: TapSums<3>(d, grad, from, c.dilation_w, vectors, out + s); break;
          case 2: TapSums<2>(d, grad, from, c.dilation_w, vectors, out + s); break;
          default: TapSums<1>(d, grad, from, c.dilation_w, vectors, out + s); break;
        }
      }
    }
    for (int64_t t = 0; t < c.R * c.S; ++t) taps[o * c.R * c.S + t] += sums[t];
    if (bias) {
      auto total = hn::Zero(d);
      for (int64_t v = 0; v < vectors; ++v) total = hn::Add(total, hn::LoadU(d, grad + v * lanes));
      bias[o] += hn::GetLane(hn::SumOfLanes(d, total));
    }
  }
}

void SingleChannelWeightGradF32(const float* x, const float* g, int64_t channels, const simd::SingleChannelConv& c,
                                double* taps, double* bias) {
  SingleChannelWeightGrad(x, g, channels, c, taps, bias);
}
void SingleChannelWeightGradBF16(const uint16_t* x, const uint16_t* g, int64_t channels,
                                 const simd::SingleChannelConv& c, double* taps, double* bias) {
  SingleChannelWeightGrad(x, g, channels, c, taps, bias);
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(SingleChannelWeightGradF32);
HWY_EXPORT(SingleChannelWeightGradBF16);

void single_channel_weight_grad(const float* x, const float* g, int64_t channels, const SingleChannelConv& c,
                                double* taps, double* bias) {
  HWY_DYNAMIC_DISPATCH(SingleChannelWeightGradF32)(x, g, channels, c, taps, bias);
}

void single_channel_weight_grad(const BFloat16* x, const BFloat16* g, int64_t channels, const SingleChannelConv& c,
                                double* taps, double* bias) {
  HWY_DYNAMIC_DISPATCH(SingleChannelWeightGradBF16)(reinterpret_cast<const uint16_t*>(x),
                                                     reinterpret_cast<const uint16_t*>(g), channels, c, taps, bias);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

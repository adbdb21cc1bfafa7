// 2-D convolution: oneDNN for float32, bfloat16 and float16, direct loops for float64 (gradient
// checks). Layouts: NCHW activations, OIHW weights; the ops make every operand contiguous.
//
// On CPUs without native 16-bit arithmetic (AVX2 and older) oneDNN's only 16-bit convolutions
// are reference loops, tens of times slower than its float32 kernels. There a float32 primitive
// takes the 16-bit tensors: the plan widens them as it relays them out and rounds the result once
// (onednn::Plan). That is the same arithmetic (products of 16-bit values are exact in float32, and
// the sums accumulate in float32 either way) at float32's speed.

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/onednn/plan.h"
#include "tensorplay/dispatch/kernel_toolbox.h"

namespace tp::cpu {

namespace {

using dims = dnnl::memory::dims;

// ---- oneDNN ----

// One convolution's shapes and dtypes: the tensors' (stored) and the primitive's (type), which is
// float32 where it computes 16-bit tensors in float32.
struct ConvGeometry {
  dims src, weights, dst, strides, dilates, padding_l, padding_r;
  dnnl::memory::data_type stored, type;
  int64_t groups;
  Float32Math math;  // how a float32 convolution may compute

  ConvGeometry(const Tensor& in, const Tensor& weight, const Tensor& out, const Window& w, ScalarType compute)
      : src(in.sizes().begin(), in.sizes().end()),
        dst(out.sizes().begin(), out.sizes().end()),
        stored(onednn::data_type(in.dtype())),
        type(onednn::data_type(compute)),
        groups(w.groups),
        math(compute == ScalarType::Float32 ? float32_math(Float32Ops::Conv)
                                            : Float32Math::Exact) {
    if (groups == 1) {
      weights.assign(weight.sizes().begin(), weight.sizes().end());
    } else {
      weights = {groups, weight.size(0) / groups, weight.size(1), weight.size(2), weight.size(3)};
    }
    for (int d = 0; d < 2; ++d) {
      strides.push_back(w.stride[d]);
      dilates.push_back(w.dilation[d] - 1);
      padding_l.push_back(w.padding[d]);
      // oneDNN wants the right padding that makes the sizes consistent, which may be less than
      // the left one when the last window does not reach the padding.
      int64_t extent = (weight.size(2 + d) - 1) * w.dilation[d] + 1;
      padding_r.push_back((out.size(2 + d) - 1) * w.stride[d] + extent - in.size(2 + d) - w.padding[d]);
    }
  }

  // The tensors' layouts: NCHW activations, OIHW (GOIHW) weights, a vector of biases.
  dnnl::memory::desc src_md() const { return {src, stored, dnnl::memory::format_tag::nchw}; }
  dnnl::memory::desc dst_md() const { return {dst, stored, dnnl::memory::format_tag::nchw}; }
  dnnl::memory::desc weights_md() const {
    return {weights, stored, groups == 1 ? dnnl::memory::format_tag::oihw : dnnl::memory::format_tag::goihw};
  }
  dnnl::memory::desc bias_md(dnnl::memory::data_type t) const { return {{dst[1]}, t, dnnl::memory::format_tag::x}; }
  dnnl::memory::desc bias_md() const { return bias_md(stored); }
  // The primitive's: any layout oneDNN likes (see onednn::Plan), and its bias.
  dnnl::memory::desc any(const dims& d) const { return {d, type, dnnl::memory::format_tag::any}; }
  dnnl::memory::desc primitive_bias() const { return bias_md(type); }

  onednn::Key key(int64_t kind) const {
    onednn::Key k{kind, static_cast<int64_t>(stored), static_cast<int64_t>(type), groups, static_cast<int64_t>(math)};
    for (const dims* d : {&src, &weights, &dst, &strides, &dilates, &padding_l, &padding_r})
      k.insert(k.end(), d->begin(), d->end());
    return k;
  }

  // Every layout left to oneDNN but the bias's, a plain vector either way.
  dnnl::convolution_forward::primitive_desc forward_pd(bool with_bias) const {
    auto desc = with_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                                            dnnl::algorithm::convolution_direct, any(src), any(weights),
                                                            primitive_bias(), any(dst), strides, dilates, padding_l,
                                                            padding_r)
                          : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                                            dnnl::algorithm::convolution_direct, any(src), any(weights),
                                                            any(dst), strides, dilates, padding_l, padding_r);
    return {desc, onednn::attributes(math), onednn::engine()};
  }
};

// A 16-bit primitive that would run oneDNN's reference loops counts as unimplemented (see above).
template <class PrimitiveDesc>
const PrimitiveDesc& fast(const PrimitiveDesc& pd, dnnl::memory::data_type type) {
  if (type != dnnl::memory::data_type::f32 && std::string_view(pd.impl_info_str()).starts_with("ref"))
    throw dnnl::error(dnnl_unimplemented, "only a reference implementation");
  return pd;
}

using PlanPtr = onednn::PlanCache::PlanPtr;

onednn::PlanCache& cache() {
  static auto* c = new onednn::PlanCache();
  return *c;
}

// The plan for one convolution and direction (kind), created by make() on first use; null when
// oneDNN has no fast kernel for it.
template <class Make>
PlanPtr plan(const ConvGeometry& g, int64_t kind, const Make& make) {
  if (g.type == dnnl::memory::data_type::undef) return nullptr;
  return cache().get(g.key(kind), make);
}

// The oneDNN convolutions below compute in compute: the tensors' dtype, or float32 for 16-bit ones.
bool onednn_forward(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias, const Window& w,
                    ScalarType compute) {
  ConvGeometry g(in, weight, out, w, compute);
  const bool with_bias = bias.defined();
  PlanPtr p = plan(g, with_bias ? 1 : 0, [&] {
    auto pd = fast(g.forward_pd(with_bias), g.type);
    std::vector<onednn::Plan::Operand> operands{{DNNL_ARG_SRC, g.src_md(), pd.src_desc(), false},
                                                {DNNL_ARG_WEIGHTS, g.weights_md(), pd.weights_desc(), false},
                                                {DNNL_ARG_DST, g.dst_md(), pd.dst_desc(), true}};
    if (with_bias) operands.push_back({DNNL_ARG_BIAS, g.bias_md(), pd.bias_desc(), false});
    return std::make_shared<const onednn::Plan>(dnnl::convolution_forward(pd), pd, operands);
  });
  if (!p) return false;
  onednn::Plan::Data data{{DNNL_ARG_SRC, in.data_ptr()}, {DNNL_ARG_WEIGHTS, weight.data_ptr()},
                           {DNNL_ARG_DST, out.data_ptr()}};
  if (with_bias) data.add(DNNL_ARG_BIAS, bias.data_ptr());
  p->execute(data);
  return true;
}

bool onednn_input_grad(const Tensor& grad_in, const Tensor& grad_out, const Tensor& weight, const Window& w,
                       ScalarType compute) {
  ConvGeometry g(grad_in, weight, grad_out, w, compute);
  PlanPtr p = plan(g, 2, [&] {
    dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, g.any(g.src), g.any(g.weights),
                                               g.any(g.dst), g.strides, g.dilates, g.padding_l, g.padding_r);
    auto pd = fast(dnnl::convolution_backward_data::primitive_desc(desc, onednn::attributes(g.math), onednn::engine(),
                                                                   g.forward_pd(false)),
                   g.type);
    return std::make_shared<const onednn::Plan>(
        dnnl::convolution_backward_data(pd), pd,
        std::vector<onednn::Plan::Operand>{{DNNL_ARG_DIFF_DST, g.dst_md(), pd.diff_dst_desc(), false},
                                           {DNNL_ARG_WEIGHTS, g.weights_md(), pd.weights_desc(), false},
                                           {DNNL_ARG_DIFF_SRC, g.src_md(), pd.diff_src_desc(), true}});
  });
  if (!p) return false;
  p->execute({{DNNL_ARG_DIFF_DST, grad_out.data_ptr()}, {DNNL_ARG_WEIGHTS, weight.data_ptr()},
              {DNNL_ARG_DIFF_SRC, grad_in.data_ptr()}});
  return true;
}

bool onednn_weight_grad(const Tensor& grad_weight, const Tensor& grad_bias, const Tensor& grad_out, const Tensor& in,
                        const Window& w, ScalarType compute) {
  ConvGeometry g(in, grad_weight, grad_out, w, compute);
  const bool with_bias = grad_bias.defined();
  PlanPtr p = plan(g, with_bias ? 4 : 3, [&] {
    using Desc = dnnl::convolution_backward_weights::desc;
    const auto direct = dnnl::algorithm::convolution_direct;
    const Desc desc = with_bias ? Desc(direct, g.any(g.src), g.any(g.weights), g.primitive_bias(), g.any(g.dst),
                                       g.strides, g.dilates, g.padding_l, g.padding_r)
                                : Desc(direct, g.any(g.src), g.any(g.weights), g.any(g.dst), g.strides, g.dilates,
                                       g.padding_l, g.padding_r);
    auto pd = fast(dnnl::convolution_backward_weights::primitive_desc(desc, onednn::attributes(g.math), onednn::engine(),
                                                                      g.forward_pd(with_bias)),
                   g.type);
    std::vector<onednn::Plan::Operand> operands{{DNNL_ARG_SRC, g.src_md(), pd.src_desc(), false},
                                                {DNNL_ARG_DIFF_DST, g.dst_md(), pd.diff_dst_desc(), false},
                                                {DNNL_ARG_DIFF_WEIGHTS, g.weights_md(), pd.diff_weights_desc(), true}};
    if (with_bias) operands.push_back({DNNL_ARG_DIFF_BIAS, g.bias_md(), pd.diff_bias_desc(), true});
    return std::make_shared<const onednn::Plan>(dnnl::convolution_backward_weights(pd), pd, operands);
  });
  if (!p) return false;
  onednn::Plan::Data data{{DNNL_ARG_SRC, in.data_ptr()}, {DNNL_ARG_DIFF_DST, grad_out.data_ptr()},
                           {DNNL_ARG_DIFF_WEIGHTS, grad_weight.data_ptr()}};
  if (with_bias) data.add(DNNL_ARG_DIFF_BIAS, grad_bias.data_ptr());
  p->execute(data);
  return true;
}

// ---- Direct loops ----
// Sizes: N batch, C input channels, O output channels, Cg/Og per group, (H, W) input,
// (P, Q) output, (R, S) kernel.

struct Dims {
  int64_t N, C, H, W, O, P, Q, R, S, Cg, Og;
  Dims(const Tensor& in, const Tensor& weight, const Tensor& out, const Window& w)
      : N(in.size(0)), C(in.size(1)), H(in.size(2)), W(in.size(3)), O(out.size(1)), P(out.size(2)), Q(out.size(3)),
        R(weight.size(2)), S(weight.size(3)), Cg(C / w.groups), Og(O / w.groups) {}
};

// Calls f(n, o, p, q, c, r, s, h, x) for every input position a window touches.
template <class F>
void for_each_tap(const Dims& d, const Window& w, int64_t n, int64_t o, const F& f) {
  const int64_t group = o / d.Og;
  for (int64_t p = 0; p < d.P; ++p)
    for (int64_t q = 0; q < d.Q; ++q)
      for (int64_t c = 0; c < d.Cg; ++c)
        for (int64_t r = 0; r < d.R; ++r) {
          const int64_t h = p * w.stride[0] - w.padding[0] + r * w.dilation[0];
          if (h < 0 || h >= d.H) continue;
          for (int64_t s = 0; s < d.S; ++s) {
            const int64_t x = q * w.stride[1] - w.padding[1] + s * w.dilation[1];
            if (x < 0 || x >= d.W) continue;
            f(p, q, group * d.Cg + c, c, r, s, h, x);
          }
        }
}

template <class T>
void direct_forward(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias, const Window& w) {
  using M = opmath_t<T>;
  const Dims d(in, weight, out, w);
  const T* x = static_cast<const T*>(in.data_ptr());
  const T* k = static_cast<const T*>(weight.data_ptr());
  const T* b = bias.defined() ? static_cast<const T*>(bias.data_ptr()) : nullptr;
  T* y = static_cast<T*>(out.data_ptr());
  parallel_for(0, d.N * d.O, 1, [&](int64_t lo, int64_t hi) {
    std::vector<M> acc(d.P * d.Q);
    for (int64_t no = lo; no < hi; ++no) {
      const int64_t n = no / d.O, o = no % d.O;
      std::fill(acc.begin(), acc.end(), b ? static_cast<M>(b[o]) : M(0));
      for_each_tap(d, w, n, o, [&](int64_t p, int64_t q, int64_t ci, int64_t c, int64_t r, int64_t s, int64_t h, int64_t xx) {
        acc[p * d.Q + q] += static_cast<M>(x[((n * d.C + ci) * d.H + h) * d.W + xx]) *
                            static_cast<M>(k[((o * d.Cg + c) * d.R + r) * d.S + s]);
      });
      for (int64_t i = 0; i < d.P * d.Q; ++i) y[no * d.P * d.Q + i] = static_cast<T>(acc[i]);
    }
  });
}

template <class T>
void direct_input_grad(const Tensor& grad_in, const Tensor& grad_out, const Tensor& weight, const Window& w) {
  using M = opmath_t<T>;
  const Dims d(grad_in, weight, grad_out, w);
  const T* g = static_cast<const T*>(grad_out.data_ptr());
  const T* k = static_cast<const T*>(weight.data_ptr());
  T* gx = static_cast<T*>(grad_in.data_ptr());
  parallel_for(0, d.N, 1, [&](int64_t lo, int64_t hi) {
    std::vector<M> acc(d.C * d.H * d.W);
    for (int64_t n = lo; n < hi; ++n) {
      std::fill(acc.begin(), acc.end(), M(0));
      for (int64_t o = 0; o < d.O; ++o)
        for_each_tap(d, w, n, o, [&](int64_t p, int64_t q, int64_t ci, int64_t c, int64_t r, int64_t s, int64_t h, int64_t xx) {
          acc[(ci * d.H + h) * d.W + xx] += static_cast<M>(g[((n * d.O + o) * d.P + p) * d.Q + q]) *
                                            static_cast<M>(k[((o * d.Cg + c) * d.R + r) * d.S + s]);
        });
      for (int64_t i = 0; i < d.C * d.H * d.W; ++i) gx[n * d.C * d.H * d.W + i] = static_cast<T>(acc[i]);
    }
  });
}

template <class T>
void direct_weight_grad(const Tensor& grad_weight, const Tensor& grad_bias, const Tensor& grad_out, const Tensor& in,
                        const Window& w) {
  using M = opmath_t<T>;
  const Dims d(in, grad_weight, grad_out, w);
  const T* g = static_cast<const T*>(grad_out.data_ptr());
  const T* x = static_cast<const T*>(in.data_ptr());
  T* gw = static_cast<T*>(grad_weight.data_ptr());
  T* gb = grad_bias.defined() ? static_cast<T*>(grad_bias.data_ptr()) : nullptr;
  const int64_t per_filter = d.Cg * d.R * d.S;
  parallel_for(0, d.O, 1, [&](int64_t lo, int64_t hi) {
    std::vector<M> acc(per_filter);
    for (int64_t o = lo; o < hi; ++o) {
      std::fill(acc.begin(), acc.end(), M(0));
      M bias_acc = 0;
      for (int64_t n = 0; n < d.N; ++n) {
        for_each_tap(d, w, n, o, [&](int64_t p, int64_t q, int64_t ci, int64_t c, int64_t r, int64_t s, int64_t h, int64_t xx) {
          acc[(c * d.R + r) * d.S + s] += static_cast<M>(g[((n * d.O + o) * d.P + p) * d.Q + q]) *
                                          static_cast<M>(x[((n * d.C + ci) * d.H + h) * d.W + xx]);
        });
        if (gb)
          for (int64_t i = 0; i < d.P * d.Q; ++i) bias_acc += static_cast<M>(g[(n * d.O + o) * d.P * d.Q + i]);
      }
      for (int64_t i = 0; i < per_filter; ++i) gw[o * per_filter + i] = static_cast<T>(acc[i]);
      if (gb) gb[o] = static_cast<T>(bias_acc);
    }
  });
}

}  // namespace

void CpuBackend::conv2d(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias, const Window& w) {
  if (out.numel() == 0) return;
  if (onednn_forward(out, in, weight, bias, w, in.dtype())) return;
  if (is_reduced_float(out.dtype())) {
    TP_CHECK(onednn_forward(out, in, weight, bias, w, ScalarType::Float32), "[conv2d] no float32 oneDNN kernel");
    return;
  }
  visit_dtype<DTypes::Floating>("conv2d", in.dtype(), [&](auto t) { direct_forward<decltype(t)>(out, in, weight, bias, w); });
}

void CpuBackend::conv2d_input_grad(const Tensor& grad_in, const Tensor& grad_out, const Tensor& weight, const Window& w) {
  if (grad_in.numel() == 0) return;
  if (grad_out.numel() == 0) return fill(grad_in, 0);
  if (onednn_input_grad(grad_in, grad_out, weight, w, grad_in.dtype())) return;
  if (is_reduced_float(grad_in.dtype())) {
    TP_CHECK(onednn_input_grad(grad_in, grad_out, weight, w, ScalarType::Float32), "[conv2d] no float32 oneDNN kernel");
    return;
  }
  visit_dtype<DTypes::Floating>("conv2d", grad_in.dtype(), [&](auto t) {
    direct_input_grad<decltype(t)>(grad_in, grad_out, weight, w);
  });
}

namespace {

// Whether oneDNN runs its AVX-512 kernels (AVX2 ones otherwise).
bool onednn_avx512() {
  static const bool avx512 = [] {
    const auto core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & core) == core;
  }();
  return avx512;
}

// Whether oneDNN's backward-weights kernels sum the bias's gradient in their own pass over grad_out:
// its AVX-512 ones do, in their JIT code, so the step needs no separate sum there; on AVX2 it sums
// in plain loops of its own, about twice as slow as ours, so there the bias gets the separate sum
// (figures in BENCHMARKS.md). (float64 runs the direct loops, which sum it as they go on any CPU.)
bool onednn_sums_bias() { return onednn_avx512(); }

// The weight gradient of a convolution of one-channel images (a grayscale network's first layer)
// through simd::single_channel_weight_grad, where oneDNN's kernels are slow at it: its AVX2 ones
// (in every layout tried, and by im2col and GEMM) and its AMX bfloat16 one. Ours, which computes
// the bias's gradient in the same pass, is faster than those on the demo CNN's first layer.
// oneDNN's AVX-512 float32 kernel is as fast as ours and keeps the job, and so do its AVX512-BF16
// kernels (Zen 4), which have not been measured against it (figures in BENCHMARKS.md). Per output
// channel in parallel, each summing the images in order: the same bits on any thread count.
bool single_channel_kernel(const Tensor& in, const Window& w) {
  const ScalarType dtype = in.dtype();
  const bool faster = !onednn_avx512() || (dtype == ScalarType::BFloat16 && onednn::runs_amx());
  return faster && in.size(1) == 1 && w.groups == 1 && w.stride[1] == 1 &&
         (dtype == ScalarType::Float32 || dtype == ScalarType::BFloat16);
}

void single_channel_weight_grad(const Tensor& grad_weight, const Tensor& grad_bias, const Tensor& grad_out,
                                const Tensor& in, const Window& w) {
  const ScalarType dtype = in.dtype();
  const int64_t N = in.size(0), O = grad_out.size(1);
  const simd::SingleChannelConv c{in.size(2),          in.size(3),          grad_out.size(2), grad_out.size(3),
                                  grad_weight.size(2), grad_weight.size(3), w.stride[0],      w.padding[0],
                                  w.padding[1],        w.dilation[0],       w.dilation[1]};
  const int64_t taps = c.R * c.S, plane = c.P * c.Q;
  std::vector<double> weight_sums(O * taps, 0.0), bias_sums(grad_bias.defined() ? O : 0, 0.0);
  visit_dtype<DTypes::Floating>("conv2d", dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
      const T* x = static_cast<const T*>(in.data_ptr());
      const T* g = static_cast<const T*>(grad_out.data_ptr());
      T* gw = static_cast<T*>(grad_weight.data_ptr());
      T* gb = grad_bias.defined() ? static_cast<T*>(grad_bias.data_ptr()) : nullptr;
      parallel_for(0, O, 1, [&](int64_t lo, int64_t hi) {
        double* bias = gb ? bias_sums.data() + lo : nullptr;
        for (int64_t n = 0; n < N; ++n)
          simd::single_channel_weight_grad(x + n * c.H * c.W, g + (n * O + lo) * plane, hi - lo, c,
                                           weight_sums.data() + lo * taps, bias);
        for (int64_t i = lo * taps; i < hi * taps; ++i) gw[i] = static_cast<T>(static_cast<float>(weight_sums[i]));
        for (int64_t o = lo; gb && o < hi; ++o) gb[o] = static_cast<T>(static_cast<float>(bias_sums[o]));
      });
    }
  });
}

}  // namespace

void CpuBackend::conv2d_weight_grad(const Tensor& grad_weight, const Tensor& grad_bias, const Tensor& grad_out,
                                    const Tensor& in, const Window& w) {
  // The bias's gradient is summed apart where no kernel below would sum it too.
  const bool no_product = grad_weight.numel() == 0 || grad_out.numel() == 0 || in.numel() == 0;
  const bool single_channel = !no_product && single_channel_kernel(in, w);
  const bool kernel_sums_bias = single_channel || onednn_sums_bias() || in.dtype() == ScalarType::Float64;
  if (grad_bias.defined() && (no_product || !kernel_sums_bias)) {
    conv2d_weight_grad(grad_weight, Tensor(), grad_out, in, w);
    // reduce writes grad_out's shape with the summed dims of size 1: grad_bias seen as [1, C, 1, 1].
    const Tensor sums = make_view(grad_bias, {1, grad_bias.numel(), 1, 1}, {0, grad_bias.stride(0), 0, 0},
                                  grad_bias.storage_offset());
    return reduce(ReduceOp::Sum, sums, grad_out, {true, false, true, true});
  }
  if (no_product) return fill(grad_weight, 0);
  if (single_channel) return single_channel_weight_grad(grad_weight, grad_bias, grad_out, in, w);
  if (onednn_weight_grad(grad_weight, grad_bias, grad_out, in, w, in.dtype())) return;
  if (is_reduced_float(grad_weight.dtype())) {
    TP_CHECK(onednn_weight_grad(grad_weight, grad_bias, grad_out, in, w, ScalarType::Float32),
             "[conv2d] no float32 oneDNN kernel");
    return;
  }
  visit_dtype<DTypes::Floating>("conv2d", in.dtype(), [&](auto t) {
    direct_weight_grad<decltype(t)>(grad_weight, grad_bias, grad_out, in, w);
  });
}

}  // namespace tp::cpu

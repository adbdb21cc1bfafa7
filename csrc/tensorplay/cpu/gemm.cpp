// Matrix multiplication. float32, bfloat16 and float16 go through oneDNN, which picks its kernel
// at run time (AVX512-BF16 where the CPU has it); float64 and integers use a plain loop.
//
// oneDNN primitives are expensive to create and cheap to run, so they are cached by shape,
// strides, dtype and scaling. A dtype this CPU's oneDNN cannot multiply (float16 without
// AVX512-FP16, bfloat16 without AVX-512: onednn_multiplies) runs in float32 and is rounded once at
// the end.

#include <optional>
#include <string_view>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/onednn/plan.h"
#include "tensorplay/dispatch/kernel_toolbox.h"

namespace tp::cpu {

namespace {

// A 3-D operand as oneDNN sees it: a batch of 1 with stride 0 broadcasts. A batch of one matrix
// gets the stride of a dense batch whatever its own: oneDNN 2.6 multiplies a transposed matrix
// whose batch stride is below the matrix's extent (linear's weight seen as [1, in, out] has a
// stride of in) with gemm:jit only, and its brgemm runs those products faster.
dnnl::memory::desc memory_desc(const Tensor& t) {
  dnnl::memory::dims dims(t.sizes().begin(), t.sizes().end());
  dnnl::memory::dims strides(t.strides().begin(), t.strides().end());
  if (strides[0] == 0) dims[0] = 1;
  if (dims[0] == 1) strides[0] = std::max(dims[1] * strides[1], dims[2] * strides[2]);
  return dnnl::memory::desc(dims, onednn::data_type(t.dtype()), strides);
}

// The matrix of a batch of one, as a 2-D operand (see packs_right_operand).
dnnl::memory::desc matrix_desc(const Tensor& t) {
  return dnnl::memory::desc({t.size(1), t.size(2)}, onednn::data_type(t.dtype()), {t.stride(1), t.stride(2)});
}

onednn::PlanCache& matmul_cache() {
  static auto* cache = new onednn::PlanCache();
  return *cache;
}

// Whether oneDNN runs its AVX2 GEMM (gemm:jit at AVX2 or below), which reads operands in place
// where its AVX-512 kernels copy them into blocks of their own: see gemm_operand.
bool avx2_gemm() {
  static const bool avx2 = [] {
    using isa = dnnl::cpu_isa;
    const isa effective = dnnl::get_effective_cpu_isa();
    return effective == isa::avx2 || effective == isa::avx2_vnni || effective == isa::avx || effective == isa::sse41;
  }();
  return avx2;
}

// An operand as oneDNN gets it: in dtype (a conversion keeps the operand's layout, so that it
// reads and writes whole rows) and with one of its two matrix strides 1 (oneDNN wants that).
//
// Where avx2_gemm(), two layouts are copied first, as that kernel reads them slowly in place
// (figures in BENCHMARKS.md):
// - rows that lie a multiple of 1 KiB apart fall into the same cache sets and evict one another
//   there. They are copied to rows 64 bytes longer, which costs a few percent of the product it
//   speeds up.
// - a small transposed operand (linear's weight in the 10-wide classifier layer), which that kernel
//   reads faster as rows; the copy fits in L2.
Tensor gemm_operand(const Tensor& t, ScalarType dtype) {
  constexpr int64_t kSmallOperand = 64 << 10;  // bytes
  const bool rows = t.stride(2) == 1, dense = rows || t.stride(1) == 1;
  const bool relayout = avx2_gemm() && !rows && t.numel() * itemsize(dtype) <= kSmallOperand;
  const bool by_rows = rows || !dense || relayout;  // the copy below is made row by row
  const Tensor lines = by_rows ? t : kernel::transpose(t, 1, 2);  // walked with a stride of ld
  const int64_t ld = lines.stride(1);
  constexpr int64_t kAliasing = 1024, kPadding = 64, kMinLines = 64;
  const bool aliasing = avx2_gemm() && lines.size(1) >= kMinLines && (ld * itemsize(dtype)) % kAliasing == 0 &&
                        t.stride(0) != 0;
  if (dense && !relayout && !aliasing && t.dtype() == dtype) return t;
  const int64_t line = lines.size(2), padded = aliasing ? line + kPadding / itemsize(dtype) : line;
  Tensor buffer = kernel::narrow(kernel::empty({t.size(0), lines.size(1), padded}, dtype, t.device()), 2, 0, line);
  backend(t.device()).copy(buffer, lines);
  return by_rows ? buffer : kernel::transpose(buffer, 1, 2);
}

// Whether this CPU's oneDNN multiplies dtype itself. It refuses bfloat16 below AVX-512 and float16
// below AVX512-FP16 (TP_CPU_CAPABILITY included) whatever the shape, so one small product tells;
// such products run in float32 instead, and their operands are converted once, not first copied
// in their own dtype for a product that cannot be made.
bool onednn_multiplies(ScalarType dtype) {
  auto probe = [](ScalarType t) {
    const dnnl::memory::desc square({1, 16, 16}, onednn::data_type(t), dnnl::memory::format_tag::abc);
    try {
      dnnl::matmul::primitive_desc(dnnl::matmul::desc(square, square, square), onednn::attributes(), onednn::engine());
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  };
  static const bool bfloat16 = probe(ScalarType::BFloat16), float16 = probe(ScalarType::Float16);
  return dtype == ScalarType::BFloat16 ? bfloat16 : dtype == ScalarType::Float16 ? float16 : true;
}

// The bias row as oneDNN's matmul takes it: [1, 1, cols], or [1, cols] for a 2-D product.
dnnl::memory::desc bias_desc(const Tensor& bias, int dims) {
  const int64_t n = bias.numel();
  const auto type = onednn::data_type(bias.dtype());
  return dims == 2 ? dnnl::memory::desc({1, n}, type, {n, 1}) : dnnl::memory::desc({1, 1, n}, type, {n, n, 1});
}

// oneDNN 2.6 runs large float32 products with its brgemm kernel, but its gemm:jit one runs them
// faster on Zen 4 from 512 up, while brgemm is ahead at 256 (figures in BENCHMARKS.md). So
// products with every extent from 512 up ask for gemm:jit first.
bool prefers_gemm_jit(const Tensor& out, const Tensor& a) {
  constexpr int64_t kLarge = 512;
  return out.dtype() == ScalarType::Float32 && out.size(1) >= kLarge && out.size(2) >= kLarge && a.size(2) >= kLarge;
}

// oneDNN 2.6's 16-bit brgemm kernels copy a right operand with dense rows into blocks of their own
// (pairs of rows interleaved) inside every call, slowly. A 2-D product created with the right
// operand's layout left to oneDNN (format_tag::any; a 3-D one keeps it plain) reads it in those
// blocks, and the plan reorders it into them first. That pays where many rows of the left operand
// reuse the blocks, so only for large products: with 256 or 512 rows against 2048, or for a right
// operand with dense columns (linear's weight), the reorder costs more than it saves, and float32
// gains nothing measurable. It is kept to AMX, the only kernels it has been measured with
// (figures in BENCHMARKS.md).
bool packs_right_operand(const Tensor& out, const Tensor& a, const Tensor& b) {
  constexpr int64_t kMinExtent = 1024;
  return onednn::runs_amx() && is_reduced_float(out.dtype()) && out.size(0) == 1 && b.stride(2) == 1 &&
         out.size(1) >= kMinExtent && out.size(2) >= kMinExtent && a.size(2) >= kMinExtent;
}

// The primitive for desc: oneDNN's first choice, or gemm:jit where prefers_gemm_jit and oneDNN has
// it for desc.
dnnl::matmul::primitive_desc matmul_primitive(const dnnl::matmul::desc& desc, const dnnl::primitive_attr& attr,
                                              bool gemm_jit) {
  dnnl::matmul::primitive_desc pd(desc, attr, onednn::engine());
  if (!gemm_jit) return pd;
  do {
    if (std::string_view(pd.impl_info_str()).starts_with("gemm:jit")) return pd;
  } while (pd.next_impl());
  return dnnl::matmul::primitive_desc(desc, attr, onednn::engine());
}

bool onednn_gemm(const Tensor& out, const Tensor& a, const Tensor& b, float beta, float alpha, const Tensor& bias) {
  onednn::Key key{static_cast<int64_t>(a.dtype()), static_cast<int64_t>(out.dtype()), std::bit_cast<int32_t>(alpha),
                  std::bit_cast<int32_t>(beta), bias.defined() ? static_cast<int64_t>(bias.dtype()) : -1};
  key.reserve(key.size() + 3 * 6 + 1);  // three 3-D operands' sizes and strides, and the thread count
  for (const Tensor* t : {&out, &a, &b}) {
    key.insert(key.end(), t->sizes().begin(), t->sizes().end());
    key.insert(key.end(), t->strides().begin(), t->strides().end());
  }
  auto plan = matmul_cache().get(key, [&] {
    dnnl::primitive_attr attr = onednn::attributes();
    if (alpha != 1) attr.set_output_scales(0, {alpha});
    if (beta != 0) {
      dnnl::post_ops ops;
      ops.append_sum(beta);
      attr.set_post_ops(ops);
    }
    const bool pack = packs_right_operand(out, a, b);
    auto layout = [&](const Tensor& t) { return pack ? matrix_desc(t) : memory_desc(t); };
    const dnnl::memory::desc src = layout(a), weights = layout(b), dst = layout(out);
    const dnnl::memory::desc wanted_weights =
        pack ? dnnl::memory::desc(weights.dims(), weights.data_type(), dnnl::memory::format_tag::any) : weights;
    const std::optional<dnnl::memory::desc> bias_row =
        bias.defined() ? std::optional(bias_desc(bias, pack ? 2 : 3)) : std::nullopt;
    auto desc = bias_row ? dnnl::matmul::desc(src, wanted_weights, *bias_row, dst)
                         : dnnl::matmul::desc(src, wanted_weights, dst);
    const dnnl::matmul::primitive_desc pd = matmul_primitive(desc, attr, prefers_gemm_jit(out, a));
    std::vector<onednn::Plan::Operand> operands{{DNNL_ARG_SRC, src, src, false},
                                                {DNNL_ARG_WEIGHTS, weights, pd.weights_desc(), false},
                                                {DNNL_ARG_DST, dst, dst, true}};
    if (bias_row) operands.push_back({DNNL_ARG_BIAS, *bias_row, *bias_row, false});
    return std::make_shared<const onednn::Plan>(dnnl::matmul(pd), pd, operands);
  });
  if (!plan) return false;
  onednn::Plan::Data data{{DNNL_ARG_SRC, a.data_ptr()}, {DNNL_ARG_WEIGHTS, b.data_ptr()},
                           {DNNL_ARG_DST, out.data_ptr()}};
  if (bias.defined()) data.add(DNNL_ARG_BIAS, bias.data_ptr());
  plan->execute(data);
  return true;
}

template <class T>
void loop_gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  Tensor bc = kernel::contiguous(b);  // rows of b are walked densely
  const T al = alpha.to<T>(), be = beta.to<T>();
  const T* pa = static_cast<const T*>(a.data_ptr());
  const T* pb = static_cast<const T*>(bc.data_ptr());
  T* pc = static_cast<T*>(out.data_ptr());
  const int64_t sab = a.stride(0), sam = a.stride(1), sak = a.stride(2);
  const int64_t sbb = b.stride(0) == 0 ? 0 : k * n;
  parallel_for(0, batch * m, std::max<int64_t>(1, kGrain / std::max<int64_t>(n * k, 1)), [&](int64_t lo, int64_t hi) {
    std::vector<T> acc(n);
    for (int64_t row = lo; row < hi; ++row) {
      const int64_t bi = row / m, i = row % m;
      std::fill(acc.begin(), acc.end(), T(0));
      for (int64_t p = 0; p < k; ++p) {
        const T x = pa[bi * sab + i * sam + p * sak];
        const T* brow = pb + bi * sbb + p * n;
        for (int64_t j = 0; j < n; ++j) acc[j] += x * brow[j];
      }
      T* crow = pc + (bi * m + i) * n;
      for (int64_t j = 0; j < n; ++j) crow[j] = (be == T(0) ? T(0) : be * crow[j]) + al * acc[j];
    }
  });
}

}  // namespace

void CpuBackend::gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha,
                      const Tensor& bias) {
  if (out.numel() == 0) return;
  // oneDNN broadcasts one operand's batch, not both: then each matrix of out is its own product.
  if (out.size(0) > 1 && a.stride(0) == 0 && b.stride(0) == 0) {
    auto first = [](const Tensor& t) { return kernel::narrow(t, 0, 0, 1); };
    for (int64_t i = 0; i < out.size(0); ++i) gemm(kernel::narrow(out, 0, i, 1), first(a), first(b), beta, alpha, bias);
    return;
  }
  const ScalarType dtype = out.dtype();
  const bool onednn_dtype = onednn::data_type(dtype) != dnnl::memory::data_type::undef;
  if (a.size(2) > 0 && onednn_dtype) {
    const float be = static_cast<float>(beta.to_double()), al = static_cast<float>(alpha.to_double());
    if (onednn_multiplies(dtype)) {
      // float32 products may multiply in bfloat16 (cpu/float32_math.h) where the CPU does so natively:
      // the operands are rounded once, the sums accumulate and land in float32.
      const bool through_bfloat16 = dtype == ScalarType::Float32 && onednn_multiplies(ScalarType::BFloat16) &&
                                    float32_math(Float32Ops::Matmul) == Float32Math::BFloat16;
      const ScalarType operands = through_bfloat16 ? ScalarType::BFloat16 : dtype;
      TP_CHECK(onednn_gemm(out, gemm_operand(a, operands), gemm_operand(b, operands), be, al, bias),
               "[matmul] oneDNN could not create a ", name(operands), " matmul into ", name(dtype));
      return;
    }
    // Compute in float32 and round once (out's values only matter to a nonzero beta).
    Tensor out32 = be == 0 ? kernel::empty(out.sizes(), ScalarType::Float32, out.device())
                            : kernel::to(out, ScalarType::Float32);
    bool ok = onednn_gemm(out32, gemm_operand(a, ScalarType::Float32), gemm_operand(b, ScalarType::Float32), be, al,
                          bias.defined() ? kernel::to(bias, ScalarType::Float32) : bias);
    TP_CHECK(ok, "[matmul] oneDNN could not create a float32 matmul");
    copy(out, out32);
    return;
  }
  // The loops below add the product to out: the bias goes there first.
  if (bias.defined()) copy(out, kernel::expand(bias, out.sizes()));
  const Scalar addend_scale = bias.defined() ? Scalar(1) : beta;
  if (a.size(2) == 0) {  // an empty sum: out = beta * out
    if (addend_scale.to_double() == 0) fill(out, 0);
    else binary_scalar(BinaryOp::Mul, out, out, addend_scale);
    return;
  }
  visit_dtype<DTypes::Numeric>("matmul", dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, double> || std::is_integral_v<T>) loop_gemm<T>(out, a, b, addend_scale, alpha);
    else fail_unsupported_dtype("matmul", dtype);
  });
}

}  // namespace tp::cpu

// Matrix multiplication. float32, bfloat16 and float16 go through oneDNN, which picks its kernel
// at run time (AVX512-BF16 where the CPU has it); float64 and integers use a plain loop.
//
// oneDNN primitives are expensive to create and cheap to run, so they are cached by shape,
// strides, dtype and scaling. A dtype this CPU's oneDNN cannot multiply (float16 without
// AVX512-FP16, bfloat16 without AVX-512: onednn_multiplies) runs in float32 and is rounded once at
// the end.

#include <string_view>

#include "cpu/backend.h"
#include "cpu/convert.h"
#include "cpu/loop.h"
#include "cpu/onednn.h"
#include "ops/ops.h"

namespace tp::cpu {

namespace {

// A 3-D operand as oneDNN sees it: a batch of 1 with stride 0 broadcasts.
dnnl::memory::desc memory_desc(const Tensor& t) {
  dnnl::memory::dims dims(t.sizes().begin(), t.sizes().end());
  dnnl::memory::dims strides(t.strides().begin(), t.strides().end());
  if (strides[0] == 0) dims[0] = 1;
  return dnnl::memory::desc(dims, onednn::data_type(t.dtype()), strides);
}

onednn::PlanCache& matmul_cache() {
  static auto* cache = new onednn::PlanCache();
  return *cache;
}

// Whether oneDNN runs its AVX2 GEMM, which reads operands of the MLP's sizes in place: rows that
// lie a multiple of 1 KiB apart fall into the same cache sets and evict one another there (a
// 256x512x512 float32 product ran at 60-70% of its speed with padded rows, a leading dimension of
// 1024 floats at 35-50%). Its AVX-512 kernels copy operands into blocks of their own and run as
// fast on such rows (measured on Zen 4).
bool rows_alias_in_cache() {
  static const bool avx2 = [] {
    using isa = dnnl::cpu_isa;
    const isa effective = dnnl::get_effective_cpu_isa();
    return effective == isa::avx2 || effective == isa::avx2_vnni || effective == isa::avx || effective == isa::sse41;
  }();
  return avx2;
}

// An operand as oneDNN gets it: in dtype (a conversion keeps the operand's layout, so that it
// reads and writes whole rows), with one of its two matrix strides 1 (oneDNN wants that), and,
// where rows_alias_in_cache(), with a leading dimension that is not a multiple of 1 KiB: such an
// operand is copied to rows 64 bytes longer, which costs a few percent of the product it speeds
// up.
//
// A transposed operand is copied to rows where `to_rows` says so (unless it is broadcast over the
// batch: the copy would repeat it), and where it is small: oneDNN 2.6 multiplies rows with its
// brgemm kernels and a transposed operand with gemm:jit, which ran the MLP's 10-wide classifier
// products at under half brgemm's speed (bfloat16 256x512 by 512x10 with linear's transposed
// weight: 66 against 26 us); an operand that fits in L2 is laid out as rows in a few microseconds.
Tensor gemm_operand(const Tensor& t, ScalarType dtype, bool to_rows) {
  constexpr int64_t kSmallOperand = 64 << 10;  // bytes
  const bool rows = t.stride(2) == 1, dense = rows || t.stride(1) == 1;
  const bool broadcast = t.stride(0) == 0 && t.size(0) > 1;
  const bool relayout = !rows && ((to_rows && !broadcast) || t.numel() * itemsize(dtype) <= kSmallOperand);
  const bool by_rows = rows || !dense || relayout;  // the copy below is made row by row
  const Tensor lines = by_rows ? t : transpose(t, 1, 2);  // walked with a stride of ld
  const int64_t ld = lines.stride(1);
  constexpr int64_t kAliasing = 1024, kPadding = 64, kMinLines = 64;
  const bool aliasing = rows_alias_in_cache() && lines.size(1) >= kMinLines &&
                        (ld * itemsize(dtype)) % kAliasing == 0 && t.stride(0) != 0;
  if (dense && !relayout && !aliasing && t.dtype() == dtype) return t;
  const int64_t line = lines.size(2), padded = aliasing ? line + kPadding / itemsize(dtype) : line;
  Tensor buffer = narrow(empty({t.size(0), lines.size(1), padded}, dtype, t.device()), 2, 0, line);
  backend(t.device()).copy(buffer, lines);  // the kernel itself: nothing here is recorded for autograd
  return by_rows ? buffer : transpose(buffer, 1, 2);
}

// Whether a, the first operand of a product in dtype with n columns, is better copied to rows
// when it is transposed (a weight gradient, g^T @ x). oneDNN 2.6 multiplies bfloat16 with such an
// operand with gemm:jit, 7-9% slower than with brgemm on rows (512x256 by 256x784: 1004-1057
// against 933-969 us with the transposition, which took 11 us). Each element of a is used n
// times, so from about n = 128 on the transposition saves more than it costs. A transposed b
// gained nothing that way: brgemm copies b into blocks of its own whatever its layout.
bool first_operand_to_rows(ScalarType dtype, int64_t n) {
  constexpr int64_t kMinColumns = 128;
  return itemsize(dtype) == 2 && n >= kMinColumns;
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

// The bias row as oneDNN's matmul takes it: [1, 1, cols].
dnnl::memory::desc bias_desc(const Tensor& bias) {
  return dnnl::memory::desc({1, 1, bias.numel()}, onednn::data_type(bias.dtype()), {bias.numel(), bias.numel(), 1});
}

// oneDNN 2.6 runs large float32 products with its brgemm kernel, but its gemm:jit one ran them
// faster on Zen 4 in every paired run (one thread, square: 512 107 against 104 GFLOP/s, 768 104
// against 90-99, 1024 101-102 against 88-100, 2048 103-105 against 95-96); at 256 brgemm was
// ahead (106 against 102). So products with every extent from 512 up ask for gemm:jit first.
bool prefers_gemm_jit(const Tensor& out, const Tensor& a) {
  constexpr int64_t kLarge = 512;
  return out.dtype() == ScalarType::Float32 && out.size(1) >= kLarge && out.size(2) >= kLarge && a.size(2) >= kLarge;
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
  onednn::Key key{static_cast<int64_t>(a.dtype()), std::bit_cast<int32_t>(alpha), std::bit_cast<int32_t>(beta),
                  bias.defined() ? static_cast<int64_t>(bias.dtype()) : -1};
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
    auto desc = bias.defined() ? dnnl::matmul::desc(memory_desc(a), memory_desc(b), bias_desc(bias), memory_desc(out))
                               : dnnl::matmul::desc(memory_desc(a), memory_desc(b), memory_desc(out));
    const dnnl::matmul::primitive_desc pd = matmul_primitive(desc, attr, prefers_gemm_jit(out, a));
    std::vector<onednn::Plan::Operand> operands{{DNNL_ARG_SRC, memory_desc(a), memory_desc(a), false},
                                                {DNNL_ARG_WEIGHTS, memory_desc(b), memory_desc(b), false},
                                                {DNNL_ARG_DST, memory_desc(out), memory_desc(out), true}};
    if (bias.defined()) operands.push_back({DNNL_ARG_BIAS, bias_desc(bias), bias_desc(bias), false});
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
  Tensor bc = b.contiguous();  // rows of b are walked densely
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
  const ScalarType dtype = out.dtype();
  const bool onednn_dtype = onednn::data_type(dtype) != dnnl::memory::data_type::undef;
  if (a.size(2) > 0 && onednn_dtype) {
    const float be = static_cast<float>(beta.to_double()), al = static_cast<float>(alpha.to_double());
    if (onednn_multiplies(dtype)) {
      const bool a_to_rows = first_operand_to_rows(dtype, b.size(2));
      TP_CHECK(onednn_gemm(out, gemm_operand(a, dtype, a_to_rows), gemm_operand(b, dtype, false), be, al, bias),
               "[matmul] oneDNN could not create a ", name(dtype), " matmul");
      return;
    }
    // Compute in float32 and round once (out's values only matter to a nonzero beta).
    Tensor out32 = be == 0 ? empty_like(out, ScalarType::Float32) : out.to(ScalarType::Float32);
    bool ok = onednn_gemm(out32, gemm_operand(a, ScalarType::Float32, false),
                          gemm_operand(b, ScalarType::Float32, false), be, al,
                          bias.defined() ? bias.to(ScalarType::Float32) : bias);
    TP_CHECK(ok, "[matmul] oneDNN could not create a float32 matmul");
    copy(out, out32);
    return;
  }
  // The loops below add the product to out: the bias goes there first.
  if (bias.defined()) copy(out, expand(bias, out.sizes()));
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

#pragma once
// How float32 matmuls and convolutions may compute, as PyTorch's torch.backends.mkldnn.matmul and
// .conv fp32_precision set them: exactly ("ieee"), or with bfloat16 products accumulated in float32
// ("bf16"; torch.set_float32_matmul_precision("medium") sets it for matmuls). Matmuls then round
// their operands to bfloat16 and accumulate in float32 where the CPU multiplies bfloat16 natively
// (AVX512-BF16, AMX; cpu/gemm.cpp), and compute exactly elsewhere; convolutions pass oneDNN its
// bf16 fpmath mode, which allows that form and leaves the choice to oneDNN. Process-wide, as in
// PyTorch.

#include <cstdint>

namespace tp::cpu {

enum class Float32Math : uint8_t { Exact, BFloat16 };
enum class Float32Ops : uint8_t { Matmul, Conv };

void set_float32_math(Float32Ops ops, Float32Math math);
Float32Math float32_math(Float32Ops ops);

}  // namespace tp::cpu

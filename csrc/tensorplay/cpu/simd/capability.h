#pragma once
// The instruction sets the CPU kernels use: the best this CPU has, unless the environment variable
// TP_CPU_CAPABILITY caps them, as PyTorch's ATEN_CPU_CAPABILITY does and with its values: "avx2"
// runs what a CPU without AVX-512 (and so without AVX512-BF16) runs (oneDNN's AVX2 kernels,
// bfloat16 GEMMs and convolutions emulated in float32, Highway's AVX2 code); "default" the SSE4
// ones; "avx512" everything. The cap is applied once, before the first kernel runs.

#include <string>

namespace tp::cpu {

// Applies TP_CPU_CAPABILITY to oneDNN and Highway (once; later calls do nothing). An unknown value
// is an error.
void apply_cpu_capability();

// "AVX512", "AVX2" or "DEFAULT": what the kernels run, as torch.backends.cpu.get_cpu_capability().
std::string cpu_capability();

}  // namespace tp::cpu

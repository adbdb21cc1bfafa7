#pragma once
// What the CPU kernels run on, as this build found it at run time: the compiler, OpenMP and the
// libraries' versions, and whether OpenBLAS is its OpenMP build, whose threads are the OpenMP
// pool's (tensorplay.__config__'s show() and parallel_info() print these; the Python module warns
// on import when OpenBLAS is another build).

#include <string>

namespace tp::cpu {

struct BuildInfo {
  std::string compiler;    // "GCC 12.2"
  long cxx_standard;       // __cplusplus: 202002 for C++20
  int openmp;              // _OPENMP: the date of the OpenMP specification
  std::string blas;        // OpenBLAS's configuration: version, build options, the CPU core picked
  bool blas_openmp;        // OpenBLAS's threads are OpenMP's (its OpenMP build)
  std::string onednn;      // "3.0.0 (Git Hash ...)"
  std::string highway;     // "1.0.3"
  bool gloo;               // torch.distributed's Gloo backend is built
};

BuildInfo build_info();

// The threads OpenBLAS will use, and OpenMP's omp_get_max_threads().
int blas_num_threads();
int openmp_max_threads();

}  // namespace tp::cpu

#include "tensorplay/cpu/build_info.h"

#include <omp.h>

#include <hwy/highway.h>
#include <oneapi/dnnl/dnnl.h>

// OpenBLAS's own queries (cblas.h of the OpenMP build declares them too).
extern "C" {
char* openblas_get_config(void);
int openblas_get_parallel(void);  // 0: sequential, 1: its own threads, 2: OpenMP's
int openblas_get_num_threads(void);
}

namespace tp::cpu {

BuildInfo build_info() {
  const dnnl_version_t* dnnl = dnnl_version();
  BuildInfo info;
  info.compiler = "GCC " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__);
  info.cxx_standard = __cplusplus;
  info.openmp = _OPENMP;
  info.blas = openblas_get_config();
  info.blas_openmp = openblas_get_parallel() == 2;
  info.onednn = std::to_string(dnnl->major) + "." + std::to_string(dnnl->minor) + "." + std::to_string(dnnl->patch) +
                " (Git Hash " + dnnl->hash + ")";
  info.highway = std::to_string(HWY_MAJOR) + "." + std::to_string(HWY_MINOR) + "." + std::to_string(HWY_PATCH);
#ifdef TP_HAS_GLOO
  info.gloo = true;
#else
  info.gloo = false;
#endif
  return info;
}

int blas_num_threads() { return openblas_get_num_threads(); }

int openmp_max_threads() { return omp_get_max_threads(); }

}  // namespace tp::cpu

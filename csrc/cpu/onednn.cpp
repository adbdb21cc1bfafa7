#include "cpu/onednn.h"

#include <omp.h>

namespace tp::cpu::onednn {

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::memory::data_type data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return dnnl::memory::data_type::f32;
    case ScalarType::BFloat16: return dnnl::memory::data_type::bf16;
    case ScalarType::Float16: return dnnl::memory::data_type::f16;
    default: return dnnl::memory::data_type::undef;
  }
}

void execute(const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args) {
  // oneDNN sizes its OpenMP regions from the calling thread's setting.
  if (omp_get_max_threads() != get_num_threads()) omp_set_num_threads(get_num_threads());
  dnnl::stream stream(engine());
  p.execute(stream, args);
  stream.wait();
}

}  // namespace tp::cpu::onednn

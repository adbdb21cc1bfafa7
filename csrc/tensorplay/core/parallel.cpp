#include "tensorplay/core/parallel.h"

#include <atomic>

#include "tensorplay/core/error.h"

namespace tp {

namespace {
std::atomic<int>& num_threads() {
  static std::atomic<int> n{omp_get_max_threads()};
  return n;
}
}  // namespace

int get_num_threads() { return num_threads().load(std::memory_order_relaxed); }

void set_num_threads(int n) {
  TP_CHECK(n > 0, "[set_num_threads] expected a positive number of threads, got ", n);
  num_threads().store(n, std::memory_order_relaxed);
  omp_set_num_threads(n);  // for oneDNN, which sizes its parallel regions from this
}

}  // namespace tp

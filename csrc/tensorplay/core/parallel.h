#pragma once
// Intra-op parallelism: one OpenMP pool for every kernel (oneDNN uses the same libgomp pool).

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>

namespace tp {

int get_num_threads();
void set_num_threads(int n);

// Runs f(chunk_begin, chunk_end) over [begin, end), split across threads when the range is larger
// than `grain` elements. Exceptions thrown by f are rethrown on the calling thread.
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  int64_t n = end - begin;
  if (n <= 0) return;
  int threads = static_cast<int>(std::min<int64_t>(get_num_threads(), (n + grain - 1) / std::max<int64_t>(grain, 1)));
  if (threads <= 1 || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    int64_t chunk = (n + omp_get_num_threads() - 1) / omp_get_num_threads();
    int64_t b = begin + omp_get_thread_num() * chunk;
    int64_t e = std::min(end, b + chunk);
    if (b < e) {
      try {
        f(b, e);
      } catch (...) {
#pragma omp critical(tp_parallel_error)
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace tp

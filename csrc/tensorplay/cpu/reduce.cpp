// Reductions, arg-reductions, scans and softmax.
//
// Reductions see their input as [kept..., reduced...]: a permuted view whose reduced block is
// made contiguous when it is not, so each output element reduces one dense row. Reducing the
// leading dims of a contiguous tensor (the bias gradient's sum over the batch) instead walks
// the rows once, accumulating a whole row of outputs at a time.

#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <type_traits>
#include <vector>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/simd/simd.h"
#include "tensorplay/dispatch/kernel_toolbox.h"

namespace tp::cpu {

namespace {

// Sums n values with several accumulators and pairwise splitting, which keeps float32 sums of
// millions of elements accurate (as PyTorch's cascade sum does).
template <class Acc, class T>
Acc pairwise_sum(const T* x, int64_t n) {
  if constexpr (std::is_same_v<Acc, float> && (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>)) {
    if (n <= 256) return simd::sum_row(x, n);
  }
  if (n <= 256) {
    Acc acc[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += static_cast<Acc>(x[i + k]);
    for (; i < n; ++i) acc[0] += static_cast<Acc>(x[i]);
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  }
  int64_t half = (n / 2 + 7) / 8 * 8;
  return pairwise_sum<Acc>(x, half) + pairwise_sum<Acc>(x + half, n - half);
}

// One reduction: an accumulator type, its identity, how to fold a row and combine partials.
template <class T_, ReduceOp kOp>
struct Reducer {
  using T = T_;
  using M = opmath_t<T>;
  using Acc = std::conditional_t<kOp == ReduceOp::All || kOp == ReduceOp::Any, bool, M>;

  static Acc identity() {
    switch (kOp) {
      case ReduceOp::Sum: return Acc(0);
      case ReduceOp::Prod: return Acc(1);
      case ReduceOp::Max:
        if constexpr (std::numeric_limits<M>::has_infinity) return -std::numeric_limits<M>::infinity();
        else return std::numeric_limits<M>::lowest();
      case ReduceOp::Min:
        if constexpr (std::numeric_limits<M>::has_infinity) return std::numeric_limits<M>::infinity();
        else return std::numeric_limits<M>::max();
      case ReduceOp::All: return true;
      case ReduceOp::Any: return false;
    }
    return Acc(0);
  }

  static Acc step(Acc acc, M x) {
    if constexpr (kOp == ReduceOp::Sum) return acc + x;
    else if constexpr (kOp == ReduceOp::Prod) return std::is_same_v<M, bool> ? acc && x : acc * x;
    else if constexpr (kOp == ReduceOp::All) return acc && x != M(0);
    else if constexpr (kOp == ReduceOp::Any) return acc || x != M(0);
    else {
      if constexpr (!std::is_integral_v<M>)
        if (std::isnan(x) || std::isnan(acc)) return std::numeric_limits<M>::quiet_NaN();
      if constexpr (kOp == ReduceOp::Max) return x > acc ? x : acc;
      else return x < acc ? x : acc;
    }
  }

  // Folds partial results of consecutive parts of a row (pairwise, for sums).
  static Acc combine(const std::vector<Acc>& partial) {
    if constexpr (kOp == ReduceOp::Sum && !std::is_same_v<Acc, bool>) {
      return pairwise_sum<Acc>(partial.data(), static_cast<int64_t>(partial.size()));
    } else {
      Acc acc = partial[0];
      for (size_t c = 1; c < partial.size(); ++c) acc = step(acc, static_cast<M>(partial[c]));
      return acc;
    }
  }

  static Acc row(const T* x, int64_t n) {
    if constexpr (kOp == ReduceOp::Sum) {
      return pairwise_sum<Acc>(x, n);
    } else {
      Acc acc = identity();
      for (int64_t i = 0; i < n; ++i) acc = step(acc, static_cast<M>(x[i]));
      return acc;
    }
  }
};

// Whether t reads some element more than once (an expanded tensor): a contiguous copy of it
// would be larger than its memory, without bound (ones(1, n).expand(n, n)).
bool overlaps(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.stride(d) == 0 && t.size(d) > 1) return true;
  return false;
}

// Copies elements [begin, end) of the strided `rows`, in row-major order, into dst.
template <class T>
void gather(const Tensor& rows, int64_t begin, int64_t end, T* dst) {
  const int64_t last = rows.dim() - 1, inner = rows.size(last), inner_stride = rows.stride(last);
  DimVector<int64_t> index(last + 1, 0);
  for (int64_t d = last, rest = begin; d >= 0; --d) {
    index[d] = rest % rows.size(d);
    rest /= rows.size(d);
  }
  const T* base = static_cast<const T*>(rows.data_ptr());
  while (begin < end) {
    const T* src = base;
    for (int64_t d = 0; d <= last; ++d) src += index[d] * rows.stride(d);
    const int64_t n = std::min(inner - index[last], end - begin);
    for (int64_t i = 0; i < n; ++i) *dst++ = src[i * inner_stride];
    begin += n;
    index[last] += n;
    for (int64_t d = last; d > 0 && index[d] == rows.size(d); --d) {
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

// The general case for inputs that overlap themselves: each output reduces its row of `rows`
// ([kept..., reduced...], strided) a bounded chunk at a time, gathered into a buffer, and folds
// the chunks' partial results, so memory stays bounded whatever the expanded size.
template <class R, class Out>
void reduce_in_chunks(Out* o, const Tensor& rows, int64_t kept, int64_t reduced) {
  using T = typename R::T;
  constexpr int64_t kChunk = 16384;
  const int64_t chunks = (reduced + kChunk - 1) / kChunk;
  // Chunk c of the row starting at element `start`.
  auto part = [&](int64_t start, int64_t c, T* buffer) {
    const int64_t lo = c * kChunk, hi = std::min(reduced, lo + kChunk);
    gather(rows, start + lo, start + hi, buffer);
    return R::row(buffer, hi - lo);
  };
  std::vector<typename R::Acc> partial(std::max<int64_t>(chunks, 1), R::identity());
  if (kept == 1) {  // a full reduction: split the one row's chunks across threads
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      auto buffer = std::make_unique_for_overwrite<T[]>(kChunk);
      for (int64_t c = b; c < e; ++c) partial[c] = part(0, c, buffer.get());
    });
    o[0] = static_cast<Out>(R::combine(partial));
    return;
  }
  parallel_for(0, kept, std::max<int64_t>(1, kGrain / std::max<int64_t>(reduced, 1)), [&](int64_t b, int64_t e) {
    auto buffer = std::make_unique_for_overwrite<T[]>(std::min(reduced, kChunk));
    std::vector<typename R::Acc> parts(partial);
    for (int64_t k = b; k < e; ++k) {
      for (int64_t c = 0; c < chunks; ++c) parts[c] = part(k * reduced, c, buffer.get());
      o[k] = static_cast<Out>(R::combine(parts));
    }
  });
}

// Rows narrower than this are summed several at a time (sum_narrow_rows).
constexpr int64_t kNarrowRow = 256;

// The sum of `reduced` contiguous rows of `kept` elements, for narrow rows (a complex tensor's pairs, a
// few columns over a long batch): m consecutive rows are read as one row of m * kept elements, so each
// vector step covers m rows rather than a fraction of one; the groups of rows are split across
// threads, each with accumulators of its own, and the m partial sums of each column fold at the end.
template <class R, class T, class Out>
void sum_narrow_rows(Out* o, const T* x, int64_t reduced, int64_t kept) {
  using Acc = typename R::Acc;
  const int64_t m = kNarrowRow / kept, width = m * kept, groups = reduced / m;
  const int64_t chunks = std::clamp<int64_t>(groups * width / kGrain, 1, get_num_threads());
  auto partial = std::make_unique<Acc[]>(chunks * width);  // (not a vector: Acc may be bool)
  std::fill_n(partial.get(), chunks * width, R::identity());
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      Acc* acc = partial.get() + c * width;
      for (int64_t g = groups * c / chunks; g < groups * (c + 1) / chunks; ++g) {
        const T* row = x + g * width;
        if constexpr (std::is_same_v<Acc, float> && (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>))
          simd::accumulate_row(acc, row, width);
        else
          for (int64_t j = 0; j < width; ++j) acc[j] = R::step(acc[j], static_cast<typename R::M>(row[j]));
      }
    }
  });
  for (int64_t k = 0; k < kept; ++k) {
    Acc total = R::identity();
    for (int64_t i = 0; i < chunks * m; ++i) total = total + partial[i * kept + k];
    for (int64_t r = groups * m; r < reduced; ++r) total = R::step(total, static_cast<typename R::M>(x[r * kept + k]));
    o[k] = static_cast<Out>(total);
  }
}

template <class T, class Out, ReduceOp kOp>
void reduce_typed(const Tensor& out, const Tensor& in, const std::vector<bool>& mask) {
  using R = Reducer<T, kOp>;
  const int64_t ndim = in.dim();
  int64_t reduced = 1;
  Shape kept_sizes, order;
  for (int64_t d = 0; d < ndim; ++d) {
    if (mask[d]) reduced *= in.size(d);
    else order.push_back(d), kept_sizes.push_back(in.size(d));
  }
  const int64_t kept = numel(kept_sizes);
  Out* o = static_cast<Out*>(out.data_ptr());  // out is contiguous with the reduced dims of size 1

  // Leading dims reduced, trailing kept, contiguous input: accumulate row by row.
  bool leading = in.is_contiguous() && reduced > 1 && kept > 1;
  for (int64_t d = 0; leading && d < ndim; ++d) leading = mask[d] == (d < ndim - static_cast<int64_t>(order.size()));
  if constexpr (kOp == ReduceOp::Sum) {
    if (leading && out.is_contiguous() && kept < kNarrowRow && reduced >= 2 * (kNarrowRow / kept))
      return sum_narrow_rows<R>(o, static_cast<const T*>(in.data_ptr()), reduced, kept);
  }
  if (leading && out.is_contiguous()) {
    const T* x = static_cast<const T*>(in.data_ptr());
    parallel_for(0, kept, kGrain / 16, [&](int64_t b, int64_t e) {
      std::vector<typename R::Acc> acc(e - b, R::identity());
      for (int64_t r = 0; r < reduced; ++r) {
        const T* row = x + r * kept;
        if constexpr (kOp == ReduceOp::Sum && std::is_same_v<typename R::Acc, float> &&
                      (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>)) {
          simd::accumulate_row(acc.data(), row + b, e - b);  // the same adds, in vector lanes
        } else {
          for (int64_t k = b; k < e; ++k) acc[k - b] = R::step(acc[k - b], static_cast<typename R::M>(row[k]));
        }
      }
      for (int64_t k = b; k < e; ++k) o[k] = static_cast<Out>(acc[k - b]);
    });
    return;
  }

  // Kept dims between reduced ones ([N, C, H, W] reduced over N, H and W: a bias's gradient),
  // contiguous input: each (outer, k) run of `inner` elements is reduced where it lies and folded
  // into out[k], instead of first copying the input into [kept, reduced] order.
  int64_t first_kept = 0, last_kept = ndim - 1;
  while (first_kept < ndim && mask[first_kept]) ++first_kept;
  while (last_kept >= 0 && mask[last_kept]) --last_kept;
  bool around = in.is_contiguous() && out.is_contiguous() && kept > 1 && reduced > 0 && last_kept < ndim - 1;
  for (int64_t d = first_kept; around && d <= last_kept; ++d) around = !mask[d];
  if (around) {
    const int64_t inner = numel(in.sizes().subspan(last_kept + 1)), outer = reduced / inner;
    const T* x = static_cast<const T*>(in.data_ptr());
    parallel_for(0, kept, std::max<int64_t>(1, kGrain / std::max<int64_t>(reduced, 1)), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        typename R::Acc acc = R::identity();
        for (int64_t r = 0; r < outer; ++r) {
          const typename R::Acc part = R::row(x + (r * kept + k) * inner, inner);
          if constexpr (kOp == ReduceOp::Sum) acc = acc + part;
          else acc = R::step(acc, static_cast<typename R::M>(part));
        }
        o[k] = static_cast<Out>(acc);
      }
    });
    return;
  }

  // General case: [kept..., reduced...] with dense reduced rows.
  for (int64_t d = 0; d < ndim; ++d)
    if (mask[d]) order.push_back(d);
  Tensor rows = kernel::permute(in, order);
  if (overlaps(rows)) return reduce_in_chunks<R>(o, rows, kept, reduced);
  rows = kernel::contiguous(rows);
  const T* x = static_cast<const T*>(rows.data_ptr());
  if (kept == 1) {  // a full reduction: split the one row across threads
    const int64_t chunks = std::min<int64_t>(get_num_threads(), std::max<int64_t>(1, reduced / kGrain));
    std::vector<typename R::Acc> partial(chunks, R::identity());
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        int64_t lo = reduced * c / chunks, hi = reduced * (c + 1) / chunks;
        partial[c] = R::row(x + lo, hi - lo);
      }
    });
    o[0] = static_cast<Out>(R::combine(partial));
    return;
  }
  parallel_for(0, kept, std::max<int64_t>(1, kGrain / std::max<int64_t>(reduced, 1)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) o[k] = static_cast<Out>(R::row(x + k * reduced, reduced));
  });
}

template <class T, class Out>
void reduce_dispatch(ReduceOp op, const Tensor& out, const Tensor& in, const std::vector<bool>& mask) {
  switch (op) {
    case ReduceOp::Sum: return reduce_typed<T, Out, ReduceOp::Sum>(out, in, mask);
    case ReduceOp::Prod: return reduce_typed<T, Out, ReduceOp::Prod>(out, in, mask);
    case ReduceOp::Max: return reduce_typed<T, Out, ReduceOp::Max>(out, in, mask);
    case ReduceOp::Min: return reduce_typed<T, Out, ReduceOp::Min>(out, in, mask);
    case ReduceOp::All: return reduce_typed<T, Out, ReduceOp::All>(out, in, mask);
    case ReduceOp::Any: return reduce_typed<T, Out, ReduceOp::Any>(out, in, mask);
  }
}

}  // namespace

void CpuBackend::reduce(ReduceOp op, const Tensor& out, const Tensor& in, const std::vector<bool>& mask) {
  visit_dtype("reduce", in.dtype(), [&](auto t) {
    using T = decltype(t);
    if (out.dtype() == ScalarType::Bool) return reduce_dispatch<T, bool>(op, out, in, mask);
    if constexpr (is_reduced_float(scalar_type_of<T>()))
      if (out.dtype() == ScalarType::Float32) return reduce_dispatch<T, float>(op, out, in, mask);
    TP_CHECK(out.dtype() == in.dtype(), "[reduce] unsupported output dtype ", name(out.dtype()));
    reduce_dispatch<T, T>(op, out, in, mask);
  });
}

void CpuBackend::arg_reduce(ArgReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in,
                            int64_t dim) {
  visit_dtype("argmax", in.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    Tensor rows = kernel::contiguous(kernel::movedim_last(in, dim));
    const int64_t n = in.dim() ? in.size(dim) : 1;
    const int64_t count = n ? in.numel() / n : 0;
    const T* x = static_cast<const T*>(rows.data_ptr());
    T* v = static_cast<T*>(values.data_ptr());
    int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
    const bool is_max = op == ArgReduceOp::Max;
    parallel_for(0, count, std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* row = x + r * n;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
          const int64_t best = simd::arg_extremum_row(row, n, is_max);
          v[r] = row[best];
          idx[r] = best;
          continue;
        }
        int64_t best = 0;
        M best_value = static_cast<M>(row[0]);
        for (int64_t i = 1; i < n; ++i) {
          M value = static_cast<M>(row[i]);
          if constexpr (!std::is_integral_v<M>)
            if (std::isnan(best_value)) break;  // the first NaN wins, as in PyTorch
          bool better = is_max ? value > best_value : value < best_value;
          if constexpr (!std::is_integral_v<M>) better = better || std::isnan(value);
          if (better) best = i, best_value = value;
        }
        v[r] = row[best];
        idx[r] = best;
      }
    });
  });
}

void CpuBackend::scan(ScanOp op, const Tensor& out, const Tensor& in, int64_t dim) {
  visit_dtype<DTypes::Numeric>(op == ScanOp::Sum ? "cumsum" : "cumprod", in.dtype(), [&](auto t) {
    using T = decltype(t);
    // PyTorch accumulates float scans in double on the CPU.
    using Acc = std::conditional_t<std::is_integral_v<T>, int64_t,
                                   std::conditional_t<std::is_same_v<T, double> || std::is_same_v<T, float>, double, float>>;
    Tensor src = kernel::contiguous(in);
    const int64_t n = in.dim() ? in.size(dim) : 1;
    const int64_t inner = in.dim() ? numel(in.sizes().subspan(dim + 1)) : 1;
    const int64_t outer = n > 0 && inner > 0 ? in.numel() / (n * inner) : 0;
    const T* x = static_cast<const T*>(src.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    const bool sum = op == ScanOp::Sum;
    parallel_for(0, outer * inner, std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t line = b; line < e; ++line) {
        int64_t base = (line / inner) * n * inner + line % inner;
        Acc acc = sum ? Acc(0) : Acc(1);
        for (int64_t i = 0; i < n; ++i) {
          Acc value = static_cast<Acc>(static_cast<opmath_t<T>>(x[base + i * inner]));
          acc = sum ? acc + value : acc * value;
          y[base + i * inner] = convert<T>(acc);
        }
      }
    });
  });
}

void CpuBackend::softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log) {
  visit_dtype<DTypes::Floating>(log ? "log_softmax" : "softmax", in.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    Tensor src = kernel::contiguous(in);
    const int64_t n = in.dim() ? in.size(dim) : 1;
    const int64_t inner = in.dim() ? numel(in.sizes().subspan(dim + 1)) : 1;
    const int64_t outer = n > 0 && inner > 0 ? in.numel() / (n * inner) : 0;
    const T* x = static_cast<const T*>(src.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    parallel_for(0, outer * inner, std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      // Contiguous rows computing in float go through the SIMD kernel (float16 ones widened first).
      constexpr bool bfloat16 = std::is_same_v<T, BFloat16>, widened = !std::is_same_v<T, M> && !bfloat16;
      std::vector<float> row(inner == 1 && (widened || bfloat16) ? n : 0), result(widened ? row.size() : 0);
      for (int64_t line = b; line < e; ++line) {
        const int64_t base = (line / inner) * n * inner + line % inner;
        if constexpr (std::is_same_v<M, float>) {
          if (inner == 1) {
            if constexpr (bfloat16) {
              if (simd::softmax_row(x + base, y + base, row.data(), n, log)) continue;
            } else if constexpr (widened) {
              convert_n(x + base, row.data(), n);
              if (simd::softmax_row(row.data(), result.data(), n, log)) {
                convert_n(result.data(), y + base, n);
                continue;
              }
            } else if (simd::softmax_row(x + base, y + base, n, log)) {
              continue;
            }
          }
        }
        M max = -std::numeric_limits<M>::infinity();
        for (int64_t i = 0; i < n; ++i) max = std::max(max, static_cast<M>(x[base + i * inner]));
        M sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<M>(x[base + i * inner]) - max);
        if (log) {
          const M log_sum = std::log(sum);  // subtracted after max: max + log(sum) could lose it
          for (int64_t i = 0; i < n; ++i)
            y[base + i * inner] = static_cast<T>((static_cast<M>(x[base + i * inner]) - max) - log_sum);
        } else {
          const M scale = M(1) / sum;
          for (int64_t i = 0; i < n; ++i)
            y[base + i * inner] = static_cast<T>(std::exp(static_cast<M>(x[base + i * inner]) - max) * scale);
        }
      }
    });
  });
}

}  // namespace tp::cpu

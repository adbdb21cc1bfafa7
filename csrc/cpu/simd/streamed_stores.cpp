// The bound above which the SIMD kernels write their outputs past the cache (WriteRow in
// simd-inl.h, and the widenings). A non-temporal store saves reading each line of the output in
// before it is overwritten whole, but leaves the output in memory, where the next op has to fetch
// it back. On an Intel Xeon with AMX, one thread, float32 gelu alone and gelu followed by a sum of
// its output, streamed against plain stores:
//   12-32 MiB   gelu the same (0.88 against 0.91 ms at 12 MiB), gelu + sum 35-37% slower
//               (3.44 to 4.70 ms at 32 MiB)
//   48 MiB      gelu 12% faster (4.01 to 3.55 ms), gelu + sum 15% slower (6.2 to 7.4)
//   64-128 MiB  gelu 23-30% faster (6.8 to 4.8 ms at 64), gelu + sum the same at 64 MiB and 5-9%
//               slower above; x + x then (y * y).sum() 20-27% faster from 96 MiB
// and the CNN's float32 step with its 11 MB relu outputs streamed took 23.7-24.0 ms against 21.6.
// So outputs stream from 64 MiB a call (a thread's share of an op), where the cache no longer
// keeps them for the next op. (An earlier bound of 8 MiB had made single ops faster in the
// benchmark and chains of them slower.)

#include <atomic>

#include "cpu/simd/simd.h"

namespace tp::cpu::simd {

namespace {
std::atomic<int64_t> g_streamed_bytes{int64_t{64} << 20};
}  // namespace

int64_t streamed_bytes() { return g_streamed_bytes.load(std::memory_order_relaxed); }

int64_t set_streamed_bytes(int64_t bytes) { return g_streamed_bytes.exchange(bytes, std::memory_order_relaxed); }

}  // namespace tp::cpu::simd

// The bound above which the SIMD kernels write their outputs past the cache (WriteRow in
// simd-inl.h, and the widenings). A non-temporal store saves reading each line of the output in
// before it is overwritten whole, but leaves the output in memory, where the next op has to fetch
// it back. So outputs stream from 64 MiB a call (a thread's share of an op), where the cache no
// longer keeps them for the next op; below that, streaming makes chains of ops slower. (Figures
// in BENCHMARKS.md, "Big outputs stream past the cache".)

#include <atomic>

#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu::simd {

namespace {
std::atomic<int64_t> g_streamed_bytes{int64_t{64} << 20};
}  // namespace

int64_t streamed_bytes() { return g_streamed_bytes.load(std::memory_order_relaxed); }

int64_t set_streamed_bytes(int64_t bytes) { return g_streamed_bytes.exchange(bytes, std::memory_order_relaxed); }

}  // namespace tp::cpu::simd

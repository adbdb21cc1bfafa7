#pragma once
// Memory for storages. The CPU allocator caches freed blocks by size class and hands them out
// again, so an op that allocates a large output on every call does not pay fresh page faults
// each time (the kernel zeroes every newly mapped page on first touch).

#include <cstddef>
#include <cstdint>

#include "tensorplay/core/device.h"

namespace tp {

// Owning pointer to a block of bytes with the function that releases it.
class DataPtr {
 public:
  using Deleter = void (*)(void* data, void* context);
  DataPtr() = default;
  DataPtr(void* data, void* context, Deleter deleter) : data_(data), context_(context), deleter_(deleter) {}
  DataPtr(DataPtr&& o) noexcept;
  DataPtr& operator=(DataPtr&& o) noexcept;
  ~DataPtr();
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
  void* context_ = nullptr;
  Deleter deleter_ = nullptr;
};

struct AllocatorStats {
  int64_t allocated_bytes = 0;       // in live blocks (rounded up to their size class)
  int64_t peak_allocated_bytes = 0;
  int64_t cached_bytes = 0;          // in freed blocks kept for reuse
  int64_t allocations = 0;           // calls to allocate
  int64_t cache_hits = 0;            // of which were served from the cache
};

DataPtr cpu_allocate(size_t nbytes);
AllocatorStats cpu_allocator_stats();
// Returns every cached block to the system.
void cpu_empty_cache();
// Starts a new peak: peak_allocated_bytes becomes what is allocated now.
void cpu_reset_peak_stats();

}  // namespace tp

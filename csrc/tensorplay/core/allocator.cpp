#include "tensorplay/core/allocator.h"

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tensorplay/core/error.h"
#include "tensorplay/profiler/profiler.h"

namespace tp {

DataPtr::DataPtr(DataPtr&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), context_(o.context_), deleter_(std::exchange(o.deleter_, nullptr)) {}

DataPtr& DataPtr::operator=(DataPtr&& o) noexcept {
  std::swap(data_, o.data_);
  std::swap(context_, o.context_);
  std::swap(deleter_, o.deleter_);
  return *this;
}

DataPtr::~DataPtr() {
  if (deleter_) deleter_(data_, context_);
}

namespace {

constexpr size_t kAlignment = 64;                  // a cache line; an AVX-512 vector
constexpr size_t kHugePage = size_t{2} << 20;      // blocks this big ask for transparent huge pages

// Four size classes per power of two, so a block wastes at most a quarter of its size.
size_t size_class(size_t nbytes) {
  if (nbytes <= 256) return 256;
  size_t step = std::bit_floor(nbytes - 1) / 4;
  return (nbytes + step - 1) / step * step;
}

class CachingCpuAllocator {
 public:
  void* allocate(size_t nbytes) {
    size_t size = size_class(nbytes);
    {
      std::lock_guard lock(mutex_);
      ++stats_.allocations;
      stats_.allocated_bytes += size;
      stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        stats_.cached_bytes -= size;
        ++stats_.cache_hits;
        return p;
      }
    }
    void* p = system_allocate(size);
    if (!p) {  // out of memory: give the cache back and try once more
      empty_cache();
      p = system_allocate(size);
    }
    if (!p) {
      std::lock_guard lock(mutex_);
      stats_.allocated_bytes -= size;
      TP_FAIL("[allocate] out of memory: could not allocate ", nbytes, " bytes on cpu");
    }
    return p;
  }

  void release(void* p, size_t size) {
    std::lock_guard lock(mutex_);
    stats_.allocated_bytes -= size;
    stats_.cached_bytes += size;
    free_[size].push_back(p);
  }

  void empty_cache() {
    std::unordered_map<size_t, std::vector<void*>> blocks;
    {
      std::lock_guard lock(mutex_);
      blocks.swap(free_);
      stats_.cached_bytes = 0;
    }
    for (auto& [size, list] : blocks)
      for (void* p : list) std::free(p);
  }

  AllocatorStats stats() {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  void reset_peak() {
    std::lock_guard lock(mutex_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
  }

 private:
  static void* system_allocate(size_t size) {
    size_t alignment = size >= 2 * kHugePage ? kHugePage : kAlignment;
    void* p = nullptr;
    if (posix_memalign(&p, alignment, size) != 0) return nullptr;
    if (alignment == kHugePage) madvise(p, size, MADV_HUGEPAGE);
    return p;
  }

  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  AllocatorStats stats_;
};

// Never destroyed: storages released during static destruction must still find it.
CachingCpuAllocator& cpu_cache() {
  static auto* cache = new CachingCpuAllocator();
  return *cache;
}

}  // namespace

DataPtr cpu_allocate(size_t nbytes) {
  size_t size = size_class(nbytes);
  void* p = cpu_cache().allocate(nbytes);
  if (profiler::is_enabled()) [[unlikely]] profiler::record_memory(static_cast<int64_t>(size));
  return DataPtr(p, reinterpret_cast<void*>(size), [](void* data, void* ctx) {
    if (profiler::is_enabled()) [[unlikely]] profiler::record_memory(-static_cast<int64_t>(reinterpret_cast<size_t>(ctx)));
    cpu_cache().release(data, reinterpret_cast<size_t>(ctx));
  });
}

AllocatorStats cpu_allocator_stats() { return cpu_cache().stats(); }
void cpu_empty_cache() { cpu_cache().empty_cache(); }
void cpu_reset_peak_stats() { cpu_cache().reset_peak(); }

}  // namespace tp

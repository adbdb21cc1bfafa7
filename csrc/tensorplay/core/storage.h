#pragma once
// The bytes behind one or more tensors. Views share a Storage.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tensorplay/core/allocator.h"
#include "tensorplay/core/device.h"
#include "tensorplay/core/intrusive_ptr.h"

namespace tp {

class StorageImpl : public RefCounted {
 public:
  StorageImpl(DataPtr data, size_t nbytes, Device device)
      : data_(std::move(data)), nbytes_(nbytes), device_(device) {}

  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  // Moves the bytes to other memory of the same size (Tensor.share_memory_): every view of this
  // storage reads the new memory from then on. The caller copies the bytes over first.
  void replace_data(DataPtr data) { data_ = std::move(data); }
  Device device() const { return device_; }

  // Note [Version counter]: every in-place write to a tensor bumps the version of its storage, so
  // every view of the same bytes sees it. Autograd compares the version a saved tensor had when it
  // was saved with the current one; the autocast cast cache does the same for cached weights.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  DataPtr data_;
  size_t nbytes_;
  Device device_;
  std::atomic<uint32_t> version_{0};
};

using Storage = intrusive_ptr<StorageImpl>;

}  // namespace tp

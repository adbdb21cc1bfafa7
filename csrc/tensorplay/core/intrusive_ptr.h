#pragma once
// A reference-counted pointer whose count lives in the object (so a raw pointer can be turned
// back into an owning one, which the Python bindings rely on).

#include <atomic>
#include <cstdint>
#include <utility>

namespace tp {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  int64_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 protected:
  ~RefCounted() = default;

 private:
  template <class T> friend class intrusive_ptr;
  mutable std::atomic<int64_t> refcount_{0};
};

template <class T>
class intrusive_ptr {
 public:
  intrusive_ptr() = default;
  // Takes a new reference to p (which may already be owned elsewhere).
  explicit intrusive_ptr(T* p) : p_(p) { retain(); }
  intrusive_ptr(const intrusive_ptr& o) : p_(o.p_) { retain(); }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <class U>
  intrusive_ptr(intrusive_ptr<U> o) : p_(o.release()) {}
  ~intrusive_ptr() { reset(); }
  intrusive_ptr& operator=(intrusive_ptr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  template <class... Args>
  static intrusive_ptr make(Args&&... args) {
    return intrusive_ptr(new T(std::forward<Args>(args)...));
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const intrusive_ptr& o) const { return p_ == o.p_; }

  void reset() {
    if (p_ && p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
    p_ = nullptr;
  }
  // Gives up ownership without dropping the reference.
  T* release() { return std::exchange(p_, nullptr); }

 private:
  void retain() {
    if (p_) p_->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  T* p_ = nullptr;
};

}  // namespace tp

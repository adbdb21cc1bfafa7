#pragma once
// What the oneDNN-backed kernels (gemm.cpp, conv.cpp) share: the engine, dtype mapping, and a
// cache of primitives. oneDNN picks its kernels when a primitive is created, from the CPU it
// finds at run time; creating one costs far more than running it, so each is built once per
// shape, layout and dtype and then reused.

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/parallel.h"
#include "core/scalar_type.h"

namespace tp::cpu::onednn {

dnnl::engine& engine();

// f32, bf16 and f16 map to oneDNN types; anything else to undef.
dnnl::memory::data_type data_type(ScalarType t);

// Runs a primitive on the calling thread's stream, sized to tensorplay's thread count.
void execute(const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args);

using Key = std::vector<int64_t>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 0;
    for (int64_t f : k) h = h * 1000003u ^ std::hash<int64_t>()(f);
    return h;
  }
};

// An LRU cache; an empty optional records that oneDNN has no implementation for a key.
template <class Primitive>
class PrimitiveCache {
 public:
  // Returns the cached primitive for key, creating it with make() (which may throw dnnl::error
  // for an unimplemented combination) on first use.
  std::optional<Primitive> get(const Key& key, const std::function<Primitive()>& make) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);
      return it->second->second;
    }
    std::optional<Primitive> prim;
    try {
      prim = make();
    } catch (const dnnl::error&) {
      prim.reset();
    }
    entries_.emplace_front(key, prim);
    index_[key] = entries_.begin();
    if (entries_.size() > kCapacity) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    return prim;
  }

 private:
  static constexpr size_t kCapacity = 512;
  using Entry = std::pair<Key, std::optional<Primitive>>;
  std::mutex mutex_;
  std::list<Entry> entries_;
  std::unordered_map<Key, typename std::list<Entry>::iterator, KeyHash> index_;
};

}  // namespace tp::cpu::onednn

#include "tensorplay/amp/cast_cache.h"

#include <unordered_map>

#include "tensorplay/amp/autocast_state.h"
#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/core/tensor_impl.h"
#include "tensorplay/ops/ops.h"

namespace tp::amp {

namespace {

struct Key {
  const TensorImpl* source;
  ScalarType dtype;
  bool grad_mode;
  bool operator==(const Key&) const = default;
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    return std::hash<const void*>()(k.source) ^ (static_cast<size_t>(k.dtype) << 1 | k.grad_mode);
  }
};

struct Entry {
  Tensor source;  // held, so that the key's address cannot be reused by another tensor
  uint32_t version;
  Tensor cast;
};

thread_local std::unordered_map<Key, Entry, KeyHash> cache;

}  // namespace

bool cacheable(const Tensor& t, ScalarType dtype) {
  return is_cache_enabled() && t.dtype() == ScalarType::Float32 && is_reduced_float(dtype) && t.requires_grad() &&
         t.is_leaf() && !t.impl()->view_base();
}

Tensor cached_cast(const Tensor& t, ScalarType dtype, bool* hit) {
  const Key key{t.impl(), dtype, is_grad_enabled()};
  auto it = cache.find(key);
  if (it != cache.end() && it->second.version == t.version()) {
    *hit = true;
    return it->second.cast;
  }
  *hit = false;
  Tensor cast = to(t, dtype);
  cache.insert_or_assign(key, Entry{t, t.version(), cast});
  return cast;
}

void clear_cache() { cache.clear(); }
size_t cache_size() { return cache.size(); }

}  // namespace tp::amp

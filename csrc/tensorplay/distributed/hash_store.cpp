#include "tensorplay/distributed/hash_store.h"

#include <charconv>
#include <sstream>

#include "tensorplay/core/error.h"

namespace tp::distributed {

const Bytes* KeyMap::find(const std::string& key) const {
  auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

void KeyMap::set(const std::string& key, Bytes value) { map_[key] = std::move(value); }

int64_t KeyMap::add(const std::string& key, int64_t delta, const char* op) {
  int64_t sum = delta;
  if (const Bytes* old = find(key)) {
    std::string text = to_string(*old);
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    TP_CHECK_VALUE(!text.empty() && ec == std::errc() && end == text.data() + text.size(), "[", op, "] key '", key,
                   "' holds '", text, "', which is not an integer");
    TP_CHECK_VALUE(!__builtin_add_overflow(value, delta, &sum), "[", op, "] ", value, " + ", delta,
                   " overflows int64 at key '", key, "'");
  }
  set(key, to_bytes(std::to_string(sum)));
  return sum;
}

Bytes KeyMap::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  auto it = map_.find(key);
  if (it == map_.end()) {
    // PyTorch: an absent key counts as the empty value, and a failed swap returns what was expected.
    if (!expected.empty()) return expected;
    map_.emplace(key, desired);
    return desired;
  }
  if (it->second == expected) it->second = desired;
  return it->second;
}

bool KeyMap::erase(const std::string& key) { return map_.erase(key) > 0; }

std::vector<std::string> KeyMap::missing(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  for (const auto& key : keys)
    if (!map_.contains(key)) out.push_back(key);
  return out;
}

void fail_wait_timeout(const char* op, Duration timeout, const std::vector<std::string>& missing) {
  std::ostringstream names;
  for (size_t i = 0; i < missing.size(); ++i) names << (i ? ", " : "") << missing[i];
  TP_CHECK_KIND(ErrorKind::DistStore, false, "[", op, "] timed out after ", timeout.count(),
                " ms waiting for keys: ", names.str());
}

void HashStore::set(const std::string& key, const Bytes& value) {
  {
    std::lock_guard lock(mutex_);
    keys_.set(key, value);
  }
  key_set_.notify_all();
}

Bytes HashStore::get(const std::string& key) {
  std::unique_lock lock(mutex_);
  wait_locked(lock, {key}, timeout(), "HashStore.get");
  return *keys_.find(key);
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  int64_t sum = 0;
  {
    std::lock_guard lock(mutex_);
    sum = keys_.add(key, delta, "HashStore.add");
  }
  key_set_.notify_all();
  return sum;
}

Bytes HashStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Bytes now;
  {
    std::lock_guard lock(mutex_);
    now = keys_.compare_set(key, expected, desired);
  }
  key_set_.notify_all();
  return now;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard lock(mutex_);
  return keys_.missing(keys).empty();
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard lock(mutex_);
  return keys_.erase(key);
}

int64_t HashStore::num_keys() {
  std::lock_guard lock(mutex_);
  return keys_.size();
}

void HashStore::wait(const std::vector<std::string>& keys, Duration timeout) {
  std::unique_lock lock(mutex_);
  wait_locked(lock, keys, resolve(timeout), "HashStore.wait");
}

void HashStore::wait_locked(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys, Duration timeout,
                            const char* op) {
  auto all_set = [&] { return keys_.missing(keys).empty(); };
  if (!key_set_.wait_for(lock, timeout, all_set)) fail_wait_timeout(op, timeout, keys_.missing(keys));
}

}  // namespace tp::distributed

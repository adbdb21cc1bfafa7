#pragma once
// HashStore: the keys in this process's memory (torch.distributed.HashStore), shared by its
// threads. KeyMap holds the rules of add and compare_set that every store applies to its keys
// (FileStore replays its file into one, the TCPStore server keeps one), so that all of them agree
// with PyTorch's stores.

#include <condition_variable>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensorplay/distributed/store.h"

namespace tp::distributed {

// Not thread-safe: each store guards its own. `op` names the calling store's method in errors.
class KeyMap {
 public:
  const Bytes* find(const std::string& key) const;
  void set(const std::string& key, Bytes value);
  // A value that is not a decimal int64 is a ValueError, as PyTorch's stoll makes it.
  int64_t add(const std::string& key, int64_t delta, const char* op);
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired);
  bool erase(const std::string& key);
  int64_t size() const { return static_cast<int64_t>(map_.size()); }
  std::vector<std::string> missing(const std::vector<std::string>& keys) const;

 private:
  std::unordered_map<std::string, Bytes> map_;
};

// Every store's wait timeout reads the same: "[op] timed out after 300 ms waiting for keys: a, b".
[[noreturn]] void fail_wait_timeout(const char* op, Duration timeout, const std::vector<std::string>& missing);

class HashStore : public Store {
 public:
  explicit HashStore(Duration timeout = kDefaultTimeout) : Store(timeout) {}

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Duration timeout = kUseStoreTimeout) override;

 private:
  void wait_locked(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys, Duration timeout,
                   const char* op);

  std::mutex mutex_;
  std::condition_variable key_set_;
  KeyMap keys_;
};

}  // namespace tp::distributed

#pragma once
// The key-value store ranks meet through (torch.distributed's Store): rendezvous, sequence numbers,
// and whatever else processes must agree on before they can talk directly. One interface, several
// places to keep the keys: a TCP server on one rank (TCPStore), a shared file (FileStore), this
// process's memory (HashStore), or another store under a key prefix (PrefixStore). A process group
// of any backend (Gloo now, NCCL later) connects through a Store.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tp::distributed {

using Bytes = std::vector<uint8_t>;
using Duration = std::chrono::milliseconds;

class Store {
 public:
  // PyTorch's default: 300 s for a store (a process group passes its own timeout).
  static constexpr Duration kDefaultTimeout = std::chrono::seconds(300);
  // wait() with this timeout uses the store's own timeout.
  static constexpr Duration kUseStoreTimeout = Duration(-1);

  explicit Store(Duration timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Blocks until key exists or the store's timeout passes (RuntimeError naming the key).
  virtual Bytes get(const std::string& key) = 0;
  // Adds delta to the integer stored at key (absent: 0) and returns the sum. The value is kept as
  // its decimal digits, so that get() on a counter reads "3" as PyTorch's stores do.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Sets key to desired when its value is expected (or when it is absent and expected is empty);
  // returns the value key holds afterwards.
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  // True when every key exists, at once.
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // True when the key existed.
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;
  // Blocks until every key exists; a timeout names the keys still missing.
  virtual void wait(const std::vector<std::string>& keys, Duration timeout = kUseStoreTimeout) = 0;

  // Virtual: a store that forwards to another (PrefixStore) has that store's timeout.
  virtual Duration timeout() const { return timeout_; }
  virtual void set_timeout(Duration timeout) { timeout_ = timeout; }

 protected:
  Duration resolve(Duration timeout) const { return timeout == kUseStoreTimeout ? this->timeout() : timeout; }

 private:
  Duration timeout_;
};

using StorePtr = std::shared_ptr<Store>;

inline Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
inline std::string to_string(const Bytes& b) { return std::string(b.begin(), b.end()); }

}  // namespace tp::distributed

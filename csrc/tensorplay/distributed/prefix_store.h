#pragma once
// PrefixStore: another store's keys under "prefix/" (torch.distributed.PrefixStore), so that
// several groups can share one store without their keys meeting. num_keys counts the whole
// underlying store, as PyTorch's does.
//
// Timeouts are the underlying store's: get and wait forward to it, and its timeout applies
// (PyTorch's PrefixStore reads and sets its store's timeout; Store::set_timeout is not virtual
// here, so set a timeout on the underlying store).

#include <string>
#include <vector>

#include "tensorplay/distributed/store.h"

namespace tp::distributed {

class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, StorePtr store);

  const std::string& prefix() const { return prefix_; }
  const StorePtr& underlying_store() const { return store_; }

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Duration timeout = kUseStoreTimeout) override;

 private:
  std::string prefixed(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const;

  std::string prefix_;
  StorePtr store_;
};

}  // namespace tp::distributed

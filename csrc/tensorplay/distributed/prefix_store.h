#pragma once
// PrefixStore: another store's keys under "prefix/" (torch.distributed.PrefixStore), so that
// several groups can share one store without their keys meeting. num_keys counts the whole
// underlying store, as PyTorch's does.
//
// The timeout is the underlying store's: reading or setting it here reads or sets that store's, as
// PyTorch's PrefixStore does.

#include <string>
#include <vector>

#include "tensorplay/distributed/store.h"

namespace tp::distributed {

class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, StorePtr store);

  const std::string& prefix() const { return prefix_; }
  const StorePtr& underlying_store() const { return store_; }
  Duration timeout() const override { return store_->timeout(); }
  void set_timeout(Duration timeout) override { store_->set_timeout(timeout); }

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

#include "tensorplay/distributed/prefix_store.h"

#include "tensorplay/core/error.h"

namespace tp::distributed {

namespace {
const StorePtr& checked(const StorePtr& store) {
  TP_CHECK(store != nullptr, "[PrefixStore] the underlying store is null");
  return store;
}
}  // namespace

PrefixStore::PrefixStore(std::string prefix, StorePtr store)
    : Store(checked(store)->timeout()), prefix_(std::move(prefix)), store_(std::move(store)) {}

std::vector<std::string> PrefixStore::prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& key : keys) out.push_back(prefixed(key));
  return out;
}

void PrefixStore::set(const std::string& key, const Bytes& value) { store_->set(prefixed(key), value); }

Bytes PrefixStore::get(const std::string& key) { return store_->get(prefixed(key)); }

int64_t PrefixStore::add(const std::string& key, int64_t delta) { return store_->add(prefixed(key), delta); }

Bytes PrefixStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  return store_->compare_set(prefixed(key), expected, desired);
}

bool PrefixStore::check(const std::vector<std::string>& keys) { return store_->check(prefixed(keys)); }

bool PrefixStore::delete_key(const std::string& key) { return store_->delete_key(prefixed(key)); }

int64_t PrefixStore::num_keys() { return store_->num_keys(); }

void PrefixStore::wait(const std::vector<std::string>& keys, Duration timeout) {
  store_->wait(prefixed(keys), timeout);
}

}  // namespace tp::distributed

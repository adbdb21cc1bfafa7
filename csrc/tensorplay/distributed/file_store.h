#pragma once
// FileStore: keys shared by processes through one file (torch.distributed.FileStore). The file is
// an append-only log of records (set, delete, an instance finished), appended under an exclusive
// flock; each instance replays the records it has not read yet into a KeyMap before it answers.
// Nothing signals a change, so get and wait poll the file every kPollInterval.

#include <mutex>
#include <string>
#include <vector>

#include "tensorplay/distributed/hash_store.h"
#include "tensorplay/distributed/store.h"

namespace tp::distributed {

class FileStore : public Store {
 public:
  static constexpr Duration kPollInterval = Duration(10);

  // With num_workers > 0, the last of that many instances to be destroyed removes the file.
  explicit FileStore(std::string path, int num_workers = -1, Duration timeout = kDefaultTimeout);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  const std::string& path() const { return path_; }
  int num_workers() const { return num_workers_; }

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Duration timeout = kUseStoreTimeout) override;

 private:
  enum class Record : uint8_t { Set = 1, Delete = 2, Finish = 3 };
  class FileLock;

  // Both need mutex_ and the file's flock (exclusive to append).
  void replay(const char* op);
  void append(const char* op, Record kind, const std::string& key, const Bytes& value);
  KeyMap copy_of(const std::string& key) const;
  // Polls until every key exists; returns with mutex_ held, the keys replayed.
  std::unique_lock<std::mutex> wait_for(const std::vector<std::string>& keys, Duration timeout, const char* op);

  std::string path_;
  int num_workers_;
  int fd_ = -1;
  // Threads of one process share fd_, and a flock does not exclude holders of the same open file.
  std::mutex mutex_;
  KeyMap keys_;
  int64_t read_pos_ = 0;  // where the records not yet replayed begin
  int64_t finished_ = 0;  // instances destroyed so far
};

}  // namespace tp::distributed

#include "tensorplay/distributed/file_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "tensorplay/core/error.h"

namespace tp::distributed {

// A record: kind (1 byte), key length (4 bytes, little-endian), key, value length, value.
namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

// Reads the field at pos (a length, then that many bytes) into out; false when the log ends first.
bool read_field(std::string_view log, size_t& pos, std::string_view& out) {
  if (log.size() - pos < 4) return false;
  uint32_t n = get_u32(log.data() + pos);
  if (log.size() - pos - 4 < n) return false;
  out = log.substr(pos + 4, n);
  pos += 4 + n;
  return true;
}

}  // namespace

// Holds the file's flock for one operation.
class FileStore::FileLock {
 public:
  FileLock(int fd, bool exclusive, const char* op) : fd_(fd) {
    while (::flock(fd_, exclusive ? LOCK_EX : LOCK_SH) != 0)
      TP_CHECK(errno == EINTR, "[", op, "] cannot lock the store file: ", std::strerror(errno));
  }
  ~FileLock() { ::flock(fd_, LOCK_UN); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

FileStore::FileStore(std::string path, int num_workers, Duration timeout)
    : Store(timeout), path_(std::move(path)), num_workers_(num_workers) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  TP_CHECK(fd_ >= 0, "[FileStore] cannot open '", path_, "': ", std::strerror(errno));
}

FileStore::~FileStore() {
  // A destructor must not throw: where the file cannot be updated, it is left behind.
  try {
    std::lock_guard guard(mutex_);
    FileLock lock(fd_, true, "FileStore");
    replay("FileStore");
    append("FileStore", Record::Finish, "", {});
    if (num_workers_ > 0 && finished_ >= num_workers_) ::unlink(path_.c_str());
  } catch (...) {
  }
  ::close(fd_);
}

void FileStore::replay(const char* op) {
  struct stat st{};
  TP_CHECK(::fstat(fd_, &st) == 0, "[", op, "] cannot stat '", path_, "': ", std::strerror(errno));
  if (st.st_size <= read_pos_) return;
  std::string log(static_cast<size_t>(st.st_size - read_pos_), '\0');
  size_t got = 0;
  while (got < log.size()) {
    ssize_t n = ::pread(fd_, log.data() + got, log.size() - got, static_cast<off_t>(read_pos_ + got));
    if (n < 0 && errno == EINTR) continue;
    TP_CHECK(n >= 0, "[", op, "] cannot read '", path_, "': ", std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  std::string_view rest(log.data(), got);
  size_t pos = 0;
  // A record cut short can only be one whose writer died mid-append; it is never replayed.
  while (rest.size() - pos >= 1) {
    size_t at = pos + 1;
    std::string_view key, value;
    if (!read_field(rest, at, key) || !read_field(rest, at, value)) break;
    switch (static_cast<Record>(rest[pos])) {
      case Record::Set:
        keys_.set(std::string(key), Bytes(value.begin(), value.end()));
        break;
      case Record::Delete:
        keys_.erase(std::string(key));
        break;
      case Record::Finish:
        ++finished_;
        break;
      default:
        TP_FAIL("[", op, "] '", path_, "' is not a FileStore file (unknown record at byte ", read_pos_ + pos, ")");
    }
    pos = at;
  }
  read_pos_ += static_cast<int64_t>(pos);
}

void FileStore::append(const char* op, Record kind, const std::string& key, const Bytes& value) {
  std::string record(1, static_cast<char>(kind));
  put_u32(record, static_cast<uint32_t>(key.size()));
  record += key;
  put_u32(record, static_cast<uint32_t>(value.size()));
  record.append(value.begin(), value.end());
  // Replayed up to read_pos_ under the exclusive lock, so read_pos_ is where the log ends.
  size_t put = 0;
  while (put < record.size()) {
    ssize_t n = ::pwrite(fd_, record.data() + put, record.size() - put, static_cast<off_t>(read_pos_ + put));
    if (n < 0 && errno == EINTR) continue;
    TP_CHECK(n > 0, "[", op, "] cannot write '", path_, "': ", std::strerror(errno));
    put += static_cast<size_t>(n);
  }
  replay(op);
}

// add and compare_set run KeyMap's rules on a copy of the one key, so that only a record appended to
// the log changes keys_: the log stays the one source of truth.
KeyMap FileStore::copy_of(const std::string& key) const {
  KeyMap scratch;
  if (const Bytes* value = keys_.find(key)) scratch.set(key, *value);
  return scratch;
}

void FileStore::set(const std::string& key, const Bytes& value) {
  std::lock_guard guard(mutex_);
  FileLock lock(fd_, true, "FileStore.set");
  replay("FileStore.set");
  append("FileStore.set", Record::Set, key, value);
}

Bytes FileStore::get(const std::string& key) {
  auto guard = wait_for({key}, timeout(), "FileStore.get");
  return *keys_.find(key);
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  std::lock_guard guard(mutex_);
  FileLock lock(fd_, true, "FileStore.add");
  replay("FileStore.add");
  KeyMap scratch = copy_of(key);
  int64_t sum = scratch.add(key, delta, "FileStore.add");
  append("FileStore.add", Record::Set, key, *scratch.find(key));
  return sum;
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::lock_guard guard(mutex_);
  FileLock lock(fd_, true, "FileStore.compare_set");
  replay("FileStore.compare_set");
  KeyMap scratch = copy_of(key);
  Bytes now = scratch.compare_set(key, expected, desired);
  const Bytes* before = keys_.find(key);
  if (scratch.find(key) && (!before || *before != now)) append("FileStore.compare_set", Record::Set, key, now);
  return now;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  std::lock_guard guard(mutex_);
  FileLock lock(fd_, false, "FileStore.check");
  replay("FileStore.check");
  return keys_.missing(keys).empty();
}

bool FileStore::delete_key(const std::string& key) {
  std::lock_guard guard(mutex_);
  FileLock lock(fd_, true, "FileStore.delete_key");
  replay("FileStore.delete_key");
  if (!keys_.find(key)) return false;
  append("FileStore.delete_key", Record::Delete, key, {});
  return true;
}

int64_t FileStore::num_keys() {
  std::lock_guard guard(mutex_);
  FileLock lock(fd_, false, "FileStore.num_keys");
  replay("FileStore.num_keys");
  return keys_.size();
}

void FileStore::wait(const std::vector<std::string>& keys, Duration timeout) {
  wait_for(keys, resolve(timeout), "FileStore.wait");
}

std::unique_lock<std::mutex> FileStore::wait_for(const std::vector<std::string>& keys, Duration timeout,
                                                 const char* op) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::unique_lock guard(mutex_);
    {
      FileLock lock(fd_, false, op);
      replay(op);
    }
    std::vector<std::string> missing = keys_.missing(keys);
    if (missing.empty()) return guard;
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= Duration::zero()) fail_wait_timeout(op, timeout, missing);
    guard.unlock();
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, kPollInterval));
  }
}

}  // namespace tp::distributed

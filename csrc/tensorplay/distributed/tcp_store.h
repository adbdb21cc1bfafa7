#pragma once
// TCPStore: keys kept by a server on the master rank (torch.distributed.TCPStore). The master runs
// the server (tcp_store_server.h) on a thread of its own and is also one of its clients; every
// store talks to it over one TCP connection (wire format: tcp_store_protocol.h). A get or wait for
// a missing key is held by the server until the key is set, so no client polls the network.
//
// Thread-safe: requests from several threads take turns on the one connection. A connection that
// broke (the server went away, a reply never came) is dropped, and every later call says so.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tensorplay/distributed/store.h"

namespace tp::distributed {

class TCPStoreServer;

class TCPStore : public Store {
 public:
  // Connects to host:port, retrying until timeout. The master first listens on port (0: a free
  // one, see port()) on every interface and, with wait_for_workers and a world_size, then waits
  // until world_size stores (itself included) have connected.
  TCPStore(std::string host, uint16_t port, std::optional<int> world_size, bool is_master,
           Duration timeout = kDefaultTimeout, bool wait_for_workers = true);
  ~TCPStore() override;
  TCPStore(const TCPStore&) = delete;
  TCPStore& operator=(const TCPStore&) = delete;

  const std::string& host() const { return host_; }
  // The port the server listens on: the one picked when the master was given 0.
  uint16_t port() const { return port_; }
  bool is_master() const { return server_ != nullptr; }

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Duration timeout = kUseStoreTimeout) override;

 private:
  // Sends a request and returns its reply's fields (an Error reply is thrown); op names the
  // caller in errors. The caller holds mutex_.
  std::string call(const char* op, const std::string& request);
  // The same for a Get or Wait the server holds: at timeout the client cancels it, and a timeout
  // error names the keys the server still misses.
  std::string call_waiting(const char* op, const std::string& request, const std::vector<std::string>& keys,
                           Duration timeout);
  void send(const char* op, const std::string& frame);
  // The next reply's payload; nullopt when none began to arrive within timeout.
  std::optional<std::string> receive(const char* op, Duration timeout);
  bool read_exact(const char* op, char* out, size_t n, Duration timeout, bool may_time_out);
  // Closes the connection, which can no longer be trusted, and throws.
  [[noreturn]] void drop_connection(const char* op, const std::string& why);
  void close_connection();

  std::string host_;
  uint16_t port_;
  // Declared before the connection, so that the master's own connection closes first.
  std::unique_ptr<TCPStoreServer> server_;
  std::mutex mutex_;  // one request at a time on the connection
  int fd_ = -1;
};

}  // namespace tp::distributed

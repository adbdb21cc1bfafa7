#pragma once
// The TCPStore master's server: one thread polls the listening socket and every client, keeps the
// keys in a KeyMap, and holds a get or wait for a missing key until a set answers it (or the client
// cancels at its timeout), so that no waiting client polls the network. Wire format:
// tcp_store_protocol.h.

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tensorplay/distributed/hash_store.h"
#include "tensorplay/distributed/store.h"
#include "tensorplay/distributed/tcp_store_protocol.h"

namespace tp::distributed {

class TCPStoreServer {
 public:
  // Listens on every interface at port (0: a free one) and starts serving.
  explicit TCPStoreServer(uint16_t port);
  // Stops the thread and closes every connection: a client still waiting gets an error.
  ~TCPStoreServer();
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  uint16_t port() const { return port_; }
  // Blocks until n clients have joined or timeout passes; returns how many have joined.
  int wait_for_joined(int n, Duration timeout);

 private:
  // The Get or Wait a client is blocked in.
  struct Waiter {
    wire::Op op;
    std::vector<std::string> keys;
  };
  struct Connection {
    int fd = -1;
    std::string in, out;
    std::optional<Waiter> waiter;
    bool joined = false;  // until then, only a short Join is accepted
    bool closed = false;
  };

  void serve();
  void accept_clients();
  void read_from(Connection& c);
  // Handles the complete requests in c.in, in order; a waiting client's only Cancel.
  void handle_requests(Connection& c);
  void handle(Connection& c, wire::FrameReader& request);
  // Answers every waiter whose keys now exist, and the requests queued behind it.
  void answer_waiters();
  void flush(Connection& c);

  int listen_fd_ = -1;
  int wake_read_ = -1, wake_write_ = -1;  // a byte here stops serve()
  uint16_t port_ = 0;

  // Touched by the server thread alone.
  std::map<int, Connection> connections_;  // by socket
  KeyMap keys_;
  bool keys_changed_ = false;

  std::mutex joined_mutex_;
  std::condition_variable joined_cv_;
  int joined_ = 0;

  std::thread thread_;
};

}  // namespace tp::distributed

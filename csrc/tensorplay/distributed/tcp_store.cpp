#include "tensorplay/distributed/tcp_store.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <thread>

#include "tensorplay/core/error.h"
#include "tensorplay/distributed/hash_store.h"
#include "tensorplay/distributed/tcp_store_protocol.h"
#include "tensorplay/distributed/tcp_store_server.h"

namespace tp::distributed {

using wire::FrameReader;
using wire::FrameWriter;
using wire::Op;
using wire::Status;
using Clock = std::chrono::steady_clock;

namespace {

// Milliseconds left until deadline, for poll().
int ms_until(Clock::time_point deadline) {
  auto left = std::chrono::ceil<Duration>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
}

// One try at each address of host:port before deadline: a connected blocking socket, or -1 with
// the reason in error.
int try_connect(const std::string& host, uint16_t port, Clock::time_point deadline, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    error = ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* ai = found; ai && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    // Non-blocking, so that an address that never answers cannot outlast the deadline.
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = ETIMEDOUT;
      socklen_t len = sizeof err;
      if (::poll(&p, 1, ms_until(deadline)) == 1) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      error = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd >= 0) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

// Throws the error an Error reply carries.
[[noreturn]] void rethrow(FrameReader& reply) {
  int64_t kind = reply.integer();
  std::string what = reply.str();
  bool known = kind >= 0 && kind <= int64_t(ErrorKind::LinAlg);
  throw Error(known ? static_cast<ErrorKind>(kind) : ErrorKind::Runtime, what);
}

// The fields of an Ok reply; an Error reply is thrown.
FrameReader ok_fields(std::string payload) {
  FrameReader reply(std::move(payload));
  if (static_cast<Status>(reply.head()) == Status::Error) rethrow(reply);
  TP_CHECK(static_cast<Status>(reply.head()) == Status::Ok, "[TCPStore] malformed reply ", int(reply.head()));
  return reply;
}

}  // namespace

TCPStore::TCPStore(std::string host, uint16_t port, std::optional<int> world_size, bool is_master, Duration timeout,
                   bool wait_for_workers)
    : Store(timeout), host_(std::move(host)), port_(port) {
  if (is_master) {
    server_ = std::make_unique<TCPStoreServer>(port);
    port_ = server_->port();
  }
  // The server may not listen yet (other ranks start the master at their own pace): retry.
  auto deadline = Clock::now() + timeout;
  std::string error;
  for (Duration pause(10); (fd_ = try_connect(host_, port_, deadline, error)) < 0;) {
    TP_CHECK_KIND(ErrorKind::DistNetwork, Clock::now() < deadline, "[TCPStore] could not connect to ", host_, ":",
                  port_, " within ", timeout.count(), " ms: ", error);
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - Clock::now()));
    pause = std::min(pause * 2, Duration(200));
  }
  try {
    std::lock_guard lock(mutex_);
    ok_fields(call("TCPStore", std::move(FrameWriter(Op::Join).field(wire::kMagic)).finish()));
    if (server_ && wait_for_workers && world_size) {
      int joined = server_->wait_for_joined(*world_size, timeout);
      TP_CHECK_KIND(ErrorKind::DistStore, joined >= *world_size, "[TCPStore] timed out after ", timeout.count(),
                    " ms waiting for workers: ", joined, " of ", *world_size, " joined");
    }
  } catch (...) {
    close_connection();
    throw;
  }
}

TCPStore::~TCPStore() { close_connection(); }

void TCPStore::close_connection() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TCPStore::drop_connection(const char* op, const std::string& why) {
  close_connection();
  TP_CHECK_KIND(ErrorKind::DistNetwork, false, "[", op, "] lost the connection to the store at ", host_, ":", port_,
                ": ", why);
}

void TCPStore::send(const char* op, const std::string& frame) {
  TP_CHECK_KIND(ErrorKind::DistNetwork, fd_ >= 0, "[", op, "] no connection to the store at ", host_, ":", port_,
                " (it was lost by an earlier call)");
  size_t sent = 0;
  while (sent < frame.size()) {
    // MSG_NOSIGNAL: a server that went away is an error here, not a SIGPIPE that kills the process.
    ssize_t n = ::send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) drop_connection(op, std::strerror(errno));
    sent += static_cast<size_t>(n);
  }
}

bool TCPStore::read_exact(const char* op, char* out, size_t n, Duration timeout, bool may_time_out) {
  auto deadline = Clock::now() + timeout;
  size_t got = 0;
  while (got < n) {
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, ms_until(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) drop_connection(op, std::strerror(errno));
    if (ready == 0) {
      if (may_time_out && got == 0) return false;
      drop_connection(op, "no reply within " + std::to_string(timeout.count()) + " ms");
    }
    ssize_t r = ::recv(fd_, out + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) drop_connection(op, std::strerror(errno));
    if (r == 0) drop_connection(op, "the server closed it");
    got += static_cast<size_t>(r);
  }
  return true;
}

std::optional<std::string> TCPStore::receive(const char* op, Duration timeout) {
  char header[wire::kHeader];
  if (!read_exact(op, header, wire::kHeader, timeout, true)) return std::nullopt;
  uint32_t n = wire::get_u32(header);
  if (n == 0 || n > wire::kMaxFrame) drop_connection(op, "a malformed reply");
  std::string payload(n, '\0');
  read_exact(op, payload.data(), n, this->timeout(), false);
  return payload;
}

std::string TCPStore::call(const char* op, const std::string& request) {
  send(op, request);
  std::optional<std::string> payload = receive(op, timeout());
  // A late reply would be read as the answer to the next request.
  if (!payload) drop_connection(op, "no reply within " + std::to_string(timeout().count()) + " ms");
  return *payload;
}

std::string TCPStore::call_waiting(const char* op, const std::string& request, const std::vector<std::string>& keys,
                                   Duration timeout) {
  send(op, request);
  if (std::optional<std::string> payload = receive(op, timeout)) return *payload;
  send(op, std::move(FrameWriter(Op::Cancel)).finish());
  std::optional<std::string> answer = receive(op, this->timeout());
  if (!answer) drop_connection(op, "no reply to cancelling a wait");
  FrameReader reply(*answer);
  if (static_cast<Status>(reply.head()) == Status::Cancelled) {
    std::vector<std::string> missing = reply.rest();
    fail_wait_timeout(op, timeout, missing.empty() ? keys : missing);
  }
  // The keys came as we gave up: keep that answer, and read the Cancelled that follows it.
  std::optional<std::string> ack = receive(op, this->timeout());
  if (!ack || FrameReader(*ack).head() != uint8_t(Status::Cancelled)) drop_connection(op, "a malformed reply");
  return *answer;
}

void TCPStore::set(const std::string& key, const Bytes& value) {
  std::lock_guard lock(mutex_);
  ok_fields(call("TCPStore.set", std::move(FrameWriter(Op::Set).field(key).field(value)).finish()));
}

Bytes TCPStore::get(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto request = std::move(FrameWriter(Op::Get).field(key)).finish();
  return ok_fields(call_waiting("TCPStore.get", request, {key}, timeout())).bytes();
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  std::lock_guard lock(mutex_);
  return ok_fields(call("TCPStore.add", std::move(FrameWriter(Op::Add).field(key).field(delta)).finish())).integer();
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::lock_guard lock(mutex_);
  auto request = std::move(FrameWriter(Op::CompareSet).field(key).field(expected).field(desired)).finish();
  return ok_fields(call("TCPStore.compare_set", request)).bytes();
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  std::lock_guard lock(mutex_);
  return ok_fields(call("TCPStore.check", std::move(FrameWriter(Op::Check).fields(keys)).finish())).integer() != 0;
}

bool TCPStore::delete_key(const std::string& key) {
  std::lock_guard lock(mutex_);
  return ok_fields(call("TCPStore.delete_key", std::move(FrameWriter(Op::Delete).field(key)).finish())).integer() != 0;
}

int64_t TCPStore::num_keys() {
  std::lock_guard lock(mutex_);
  return ok_fields(call("TCPStore.num_keys", std::move(FrameWriter(Op::NumKeys)).finish())).integer();
}

void TCPStore::wait(const std::vector<std::string>& keys, Duration timeout) {
  std::lock_guard lock(mutex_);
  auto request = std::move(FrameWriter(Op::Wait).fields(keys)).finish();
  ok_fields(call_waiting("TCPStore.wait", request, keys, resolve(timeout)));
}

}  // namespace tp::distributed

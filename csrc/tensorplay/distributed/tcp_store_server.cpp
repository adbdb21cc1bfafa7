#include "tensorplay/distributed/tcp_store_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tensorplay/core/error.h"

namespace tp::distributed {

using wire::FrameReader;
using wire::FrameWriter;
using wire::Op;
using wire::Status;

namespace {

// A listening socket on every interface of family at port, or -1 with errno set.
int try_listen(int family, uint16_t port) {
  int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1, zero = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (family == AF_INET6) {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 clients too
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_any;
    a->sin6_port = htons(port);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    a->sin_port = htons(port);
    len = sizeof *a;
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

uint16_t bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  TP_CHECK(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0,
           "[TCPStore] getsockname failed: ", std::strerror(errno));
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void send_reply(std::string& out, FrameWriter&& reply) { out += std::move(reply).finish(); }

}  // namespace

TCPStoreServer::TCPStoreServer(uint16_t port) {
  listen_fd_ = try_listen(AF_INET6, port);
  if (listen_fd_ < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) listen_fd_ = try_listen(AF_INET, port);
  TP_CHECK(listen_fd_ >= 0, "[TCPStore] cannot listen on port ", port, ": ", std::strerror(errno));
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    int err = errno;
    ::close(listen_fd_);
    TP_FAIL("[TCPStore] pipe failed: ", std::strerror(err));
  }
  wake_read_ = pipe_fds[0];
  wake_write_ = pipe_fds[1];
  port_ = bound_port(listen_fd_);
  thread_ = std::thread([this] { serve(); });
}

TCPStoreServer::~TCPStoreServer() {
  char stop = 1;
  while (::write(wake_write_, &stop, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  for (auto& [fd, c] : connections_) ::close(fd);
  ::close(listen_fd_);
  ::close(wake_read_);
  ::close(wake_write_);
}

int TCPStoreServer::wait_for_joined(int n, Duration timeout) {
  std::unique_lock lock(joined_mutex_);
  joined_cv_.wait_for(lock, timeout, [&] { return joined_ >= n; });
  return joined_;
}

void TCPStoreServer::serve() {
  std::vector<pollfd> fds;
  try {
    while (true) {
      fds.clear();
      fds.push_back({wake_read_, POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (auto& [fd, c] : connections_)
        fds.push_back({fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) accept_clients();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        Connection& c = connections_.at(fds[i].fd);
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_from(c);
        handle_requests(c);
      }
      answer_waiters();
      for (auto it = connections_.begin(); it != connections_.end();) {
        flush(it->second);
        if (it->second.closed) {
          ::close(it->first);
          it = connections_.erase(it);
        } else {
          ++it;
        }
      }
    }
  } catch (const std::exception&) {
    // Out of memory or the like: stop serving; the destructor closes the connections, and every
    // client gets an error instead of a hang.
  }
}

void TCPStoreServer::accept_clients() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: none left; anything else: that client tries again
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    connections_[fd].fd = fd;
  }
}

void TCPStoreServer::read_from(Connection& c) {
  char buf[65536];
  while (true) {
    ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.closed = true;  // the client left (or its socket broke)
    return;
  }
}

void TCPStoreServer::handle_requests(Connection& c) {
  while (!c.closed && c.in.size() >= wire::kHeader) {
    uint32_t n = wire::get_u32(c.in.data());
    if (n == 0 || n > (c.joined ? wire::kMaxFrame : wire::kMaxJoinFrame)) {
      c.closed = true;  // not our protocol: nothing more from it can be trusted
      return;
    }
    if (c.in.size() < wire::kHeader + n) return;
    if (!c.joined && static_cast<Op>(c.in[wire::kHeader]) != Op::Join) {
      c.closed = true;
      return;
    }
    // A waiting client sends nothing but Cancel; anything else waits its turn, so that replies
    // leave in the order of their requests.
    if (c.waiter && static_cast<Op>(c.in[wire::kHeader]) != Op::Cancel) return;
    FrameReader request(c.in.substr(wire::kHeader, n));
    c.in.erase(0, wire::kHeader + n);
    try {
      handle(c, request);
    } catch (const Error& e) {
      send_reply(c.out, std::move(FrameWriter(Status::Error).field(int64_t(e.kind())).field(e.what())));
    }
  }
}

void TCPStoreServer::handle(Connection& c, FrameReader& request) {
  auto ok = [&] { return FrameWriter(Status::Ok); };
  switch (static_cast<Op>(request.head())) {
    case Op::Join: {
      TP_CHECK(request.field() == wire::kMagic, "[TCPStore] the client speaks another protocol");
      c.joined = true;
      {
        std::lock_guard lock(joined_mutex_);
        ++joined_;
      }
      joined_cv_.notify_all();
      return send_reply(c.out, ok());
    }
    case Op::Set: {
      std::string key = request.str();
      keys_.set(key, request.bytes());
      keys_changed_ = true;
      return send_reply(c.out, ok());
    }
    case Op::Get: {
      std::string key = request.str();
      if (const Bytes* value = keys_.find(key)) return send_reply(c.out, std::move(ok().field(*value)));
      c.waiter = Waiter{Op::Get, {key}};
      return;
    }
    case Op::Add: {
      std::string key = request.str();
      int64_t sum = keys_.add(key, request.integer(), "TCPStore.add");
      keys_changed_ = true;
      return send_reply(c.out, std::move(ok().field(sum)));
    }
    case Op::CompareSet: {
      std::string key = request.str();
      Bytes expected = request.bytes();
      Bytes now = keys_.compare_set(key, expected, request.bytes());
      keys_changed_ = true;
      return send_reply(c.out, std::move(ok().field(now)));
    }
    case Op::Check:
      return send_reply(c.out, std::move(ok().field(int64_t(keys_.missing(request.rest()).empty()))));
    case Op::Delete:
      return send_reply(c.out, std::move(ok().field(int64_t(keys_.erase(request.str())))));
    case Op::NumKeys:
      return send_reply(c.out, std::move(ok().field(keys_.size())));
    case Op::Wait: {
      std::vector<std::string> keys = request.rest();
      if (keys_.missing(keys).empty()) return send_reply(c.out, ok());
      c.waiter = Waiter{Op::Wait, std::move(keys)};
      return;
    }
    case Op::Cancel: {
      // Without a waiter the wait was answered as the client gave up: it reads that answer first.
      std::vector<std::string> missing = c.waiter ? keys_.missing(c.waiter->keys) : std::vector<std::string>{};
      c.waiter.reset();
      return send_reply(c.out, std::move(FrameWriter(Status::Cancelled).fields(missing)));
    }
  }
  TP_FAIL("[TCPStore] unknown request ", int(request.head()));
}

void TCPStoreServer::answer_waiters() {
  // Answering a waiter runs the requests queued behind it, which may set keys in turn.
  while (keys_changed_) {
    keys_changed_ = false;
    for (auto& [fd, c] : connections_) {
      if (!c.waiter || c.closed || !keys_.missing(c.waiter->keys).empty()) continue;
      FrameWriter reply(Status::Ok);
      if (c.waiter->op == Op::Get) reply.field(*keys_.find(c.waiter->keys[0]));
      send_reply(c.out, std::move(reply));
      c.waiter.reset();
      handle_requests(c);
    }
  }
}

void TCPStoreServer::flush(Connection& c) {
  while (!c.closed && !c.out.empty()) {
    ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;  // poll() reports when the client has read some
    } else {
      c.closed = true;
    }
  }
}

}  // namespace tp::distributed

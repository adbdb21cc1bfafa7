// The key-value stores of torch.distributed (distributed/store.h): every store against one table
// of semantics (PyTorch's), then what only one store does: TCP clients and their server, FileStore
// across processes. Timeouts are short, so that no test can hang.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tensorplay/core/error.h"
#include "tensorplay/distributed/file_store.h"
#include "tensorplay/distributed/hash_store.h"
#include "tensorplay/distributed/prefix_store.h"
#include "tensorplay/distributed/tcp_store.h"

namespace tp::distributed {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr Duration kLong = 5s;      // never reached by a passing test
constexpr Duration kShort = 200ms;  // for the tests of timeouts

Bytes b(const std::string& s) { return to_bytes(s); }

std::string temp_path() {
  static std::atomic<int> n{0};
  return "/tmp/tp_store_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

struct TempPath {
  std::string path = temp_path();
  ~TempPath() { ::unlink(path.c_str()); }
};

// The message of the tp::Error f throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Duration since(Clock::time_point start) { return std::chrono::duration_cast<Duration>(Clock::now() - start); }

// Opens handles to one store: the first call returns the store itself (for TCP, the master); each
// later call another handle to the same keys (another client, another open of the file).
using Opener = std::function<StorePtr()>;

struct Backend {
  std::string name;        // the test's
  std::string op;          // the store its errors name
  std::string key_prefix;  // what its errors show before each key
  std::function<Opener(Duration timeout)> fresh;
};

std::vector<Backend> backends() {
  return {
      {"HashStore", "HashStore", "",
       [](Duration t) {
         auto store = std::make_shared<HashStore>(t);
         return Opener([store] { return store; });
       }},
      {"PrefixStore", "HashStore", "pre/",
       [](Duration t) {
         auto base = std::make_shared<HashStore>(t);
         return Opener([base] { return std::make_shared<PrefixStore>("pre", base); });
       }},
      {"FileStore", "FileStore", "",
       [](Duration t) {
         auto file = std::make_shared<TempPath>();
         return Opener([file, t] { return std::make_shared<FileStore>(file->path, -1, t); });
       }},
      {"TCPStore", "TCPStore", "",
       [](Duration t) {
         auto master = std::make_shared<TCPStore>("127.0.0.1", 0, 1, true, t);
         auto opened = std::make_shared<bool>(false);
         return Opener([master, opened, t]() -> StorePtr {
           if (!std::exchange(*opened, true)) return master;
           return std::make_shared<TCPStore>("127.0.0.1", master->port(), std::nullopt, false, t);
         });
       }},
  };
}

class StoreTest : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    open = GetParam().fresh(kLong);
    store = open();
  }
  std::string op(const char* method) const { return "[" + GetParam().op + "." + method + "]"; }

  Opener open;
  StorePtr store;
};

TEST_P(StoreTest, SetGetRoundTrip) {
  Bytes binary = {0, 255, 'x', 0};
  store->set("a", binary);
  EXPECT_EQ(store->get("a"), binary);
  store->set("a", b("again"));
  EXPECT_EQ(store->get("a"), b("again"));
  store->set("empty", {});
  EXPECT_TRUE(store->check({"empty"}));
  EXPECT_EQ(store->get("empty"), Bytes{});
  EXPECT_EQ(open()->get("a"), b("again"));  // another handle sees it
}

TEST_P(StoreTest, GetBlocksUntilAnotherThreadSets) {
  StorePtr other = open();
  auto start = Clock::now();
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    other->set("late", b("v"));
  });
  EXPECT_EQ(store->get("late"), b("v"));
  EXPECT_GE(since(start), 40ms);
  setter.join();
}

TEST_P(StoreTest, WaitReturnsOnceEveryKeyIsSet) {
  StorePtr other = open();
  std::thread setter([&] {
    other->set("x", b("1"));
    std::this_thread::sleep_for(30ms);
    other->add("y", 1);
  });
  store->wait({"x", "y"});
  EXPECT_TRUE(store->check({"x", "y"}));
  store->wait({});
  setter.join();
}

TEST_P(StoreTest, AddReturnsRunningSumsKeptAsDecimal) {
  EXPECT_EQ(store->add("c", 3), 3);
  EXPECT_EQ(store->add("c", 4), 7);
  EXPECT_EQ(store->add("c", -10), -3);
  EXPECT_EQ(store->add("c", 0), -3);
  EXPECT_EQ(store->get("c"), b("-3"));
  store->set("d", b("40"));
  EXPECT_EQ(open()->add("d", 2), 42);
}

TEST_P(StoreTest, AddToANonIntegerIsAValueError) {
  store->set("n", b("abc"));
  try {
    store->add("n", 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_TRUE(std::string(e.what()).starts_with(op("add"))) << e.what();
  }
  EXPECT_EQ(store->get("n"), b("abc"));
  EXPECT_EQ(store->add("ok", 1), 1);  // the store still serves
}

TEST_P(StoreTest, CompareSet) {
  // Absent key: an empty expected sets it; any other returns expected and sets nothing.
  EXPECT_EQ(store->compare_set("k", {}, b("v")), b("v"));
  EXPECT_EQ(store->get("k"), b("v"));
  EXPECT_EQ(store->compare_set("absent", b("x"), b("v")), b("x"));
  EXPECT_FALSE(store->check({"absent"}));
  // Present key: a match swaps, a mismatch returns the value held.
  EXPECT_EQ(store->compare_set("k", b("v"), b("w")), b("w"));
  EXPECT_EQ(store->compare_set("k", b("zz"), b("q")), b("w"));
  EXPECT_EQ(store->compare_set("k", {}, b("q")), b("w"));
  EXPECT_EQ(open()->get("k"), b("w"));
}

TEST_P(StoreTest, Check) {
  EXPECT_TRUE(store->check({}));
  EXPECT_FALSE(store->check({"a"}));
  store->set("a", b("1"));
  EXPECT_TRUE(store->check({"a"}));
  EXPECT_FALSE(store->check({"a", "b"}));
  open()->set("b", b("2"));
  EXPECT_TRUE(store->check({"a", "b"}));
}

TEST_P(StoreTest, DeleteKeySaysWhetherItExisted) {
  store->set("a", b("1"));
  EXPECT_TRUE(store->delete_key("a"));
  EXPECT_FALSE(store->check({"a"}));
  EXPECT_FALSE(store->delete_key("a"));
  EXPECT_FALSE(open()->delete_key("never"));
  EXPECT_EQ(store->add("a", 5), 5);  // a deleted counter starts again from 0
}

TEST_P(StoreTest, NumKeys) {
  int64_t start = store->num_keys();
  EXPECT_EQ(start, 0);
  store->set("a", b("1"));
  store->add("b", 1);
  store->set("a", b("2"));
  EXPECT_EQ(store->num_keys(), start + 2);
  store->delete_key("a");
  EXPECT_EQ(open()->num_keys(), start + 1);
}

TEST_P(StoreTest, WaitTimeoutNamesTheMissingKeys) {
  store->set("b", b("1"));
  auto start = Clock::now();
  std::string p = GetParam().key_prefix;
  EXPECT_EQ(error_of([&] { store->wait({"a", "b", "c"}, kShort); }),
            op("wait") + " timed out after 200 ms waiting for keys: " + p + "a, " + p + "c");
  EXPECT_GE(since(start), kShort);
  EXPECT_LT(since(start), 2s);
  store->set("a", b("1"));  // still usable after a timeout
  EXPECT_EQ(store->get("a"), b("1"));
}

TEST_P(StoreTest, GetAndWaitUseTheStoreTimeout) {
  Opener short_open = GetParam().fresh(kShort);
  StorePtr s = short_open();
  std::string p = GetParam().key_prefix;
  auto start = Clock::now();
  EXPECT_EQ(error_of([&] { s->get("zz"); }), op("get") + " timed out after 200 ms waiting for keys: " + p + "zz");
  EXPECT_EQ(error_of([&] { s->wait({"zz"}); }), op("wait") + " timed out after 200 ms waiting for keys: " + p + "zz");
  EXPECT_LT(since(start), 2s);
  s->set("zz", b("here"));
  EXPECT_EQ(s->get("zz"), b("here"));
}

TEST_P(StoreTest, ConcurrentAddsFromSeveralHandles) {
  constexpr int kThreads = 4, kAdds = 50;
  std::vector<StorePtr> handles;
  for (int i = 0; i < kThreads; ++i) handles.push_back(open());
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int j = 0; j < kAdds; ++j) handles[i]->add("counter", 1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(store->get("counter"), b(std::to_string(kThreads * kAdds)));
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, testing::ValuesIn(backends()),
                         [](const testing::TestParamInfo<Backend>& info) { return info.param.name; });

TEST(PrefixStore, KeysLiveUnderThePrefixAndNumKeysCountsTheUnderlyingStore) {
  auto base = std::make_shared<HashStore>(kLong);
  PrefixStore a("a", base), nested("n", std::make_shared<PrefixStore>("m", base));
  EXPECT_EQ(a.underlying_store(), base);
  a.set("k", b("1"));
  nested.set("k", b("2"));
  base->set("k", b("3"));
  EXPECT_EQ(base->get("a/k"), b("1"));
  EXPECT_EQ(base->get("m/n/k"), b("2"));
  EXPECT_EQ(a.get("k"), b("1"));
  EXPECT_EQ(a.num_keys(), 3);
  EXPECT_TRUE(a.delete_key("k"));
  EXPECT_TRUE(base->check({"k"}));
  EXPECT_THROW(PrefixStore("p", nullptr), Error);
}

TEST(PrefixStore, TheTimeoutIsTheUnderlyingStores) {
  auto base = std::make_shared<HashStore>(kLong);
  PrefixStore prefixed("p", base);
  EXPECT_EQ(prefixed.timeout(), kLong);
  prefixed.set_timeout(Duration(50));
  EXPECT_EQ(base->timeout(), Duration(50));
  base->set_timeout(Duration(70));
  EXPECT_EQ(prefixed.timeout(), Duration(70));
  EXPECT_THROW(prefixed.get("missing"), Error);  // after 70 ms, not kLong
}

// A port nothing listens on, as far as anyone can tell.
uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(TCPStore, PortZeroPicksAFreePort) {
  TCPStore master("127.0.0.1", 0, std::nullopt, true, kLong);
  EXPECT_NE(master.port(), 0);
  EXPECT_TRUE(master.is_master());
  TCPStore client("localhost", master.port(), std::nullopt, false, kLong);
  EXPECT_FALSE(client.is_master());
  client.set("k", b("v"));
  EXPECT_EQ(master.get("k"), b("v"));
}

TEST(TCPStore, ManyClientsAddToOneCounter) {
  TCPStore master("127.0.0.1", 0, std::nullopt, true, kLong);
  auto shared = std::make_shared<TCPStore>("127.0.0.1", master.port(), std::nullopt, false, kLong);
  constexpr int kClients = 8, kSharing = 4, kAdds = 100;
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i)
    threads.emplace_back([&] {
      TCPStore client("127.0.0.1", master.port(), std::nullopt, false, kLong);
      for (int j = 0; j < kAdds; ++j) client.add("counter", 1);
    });
  for (int i = 0; i < kSharing; ++i)  // threads that share one client object
    threads.emplace_back([&] {
      for (int j = 0; j < kAdds; ++j) shared->add("counter", 1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(master.add("counter", 0), (kClients + kSharing) * kAdds);
}

TEST(TCPStore, OneSetAnswersEveryWaitingClient) {
  TCPStore master("127.0.0.1", 0, std::nullopt, true, kLong);
  std::atomic<int> answered{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 5; ++i)
    threads.emplace_back([&] {
      TCPStore client("127.0.0.1", master.port(), std::nullopt, false, kLong);
      if (client.get("go") == b("now")) ++answered;
    });
  std::this_thread::sleep_for(50ms);
  master.set("go", b("now"));
  for (auto& t : threads) t.join();
  EXPECT_EQ(answered, 5);
}

TEST(TCPStore, WaitForWorkers) {
  uint16_t port = free_port();
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i)  // they start before the master listens, and retry
    workers.emplace_back([&] {
      TCPStore worker("127.0.0.1", port, 3, false, kLong);
      worker.add("joined", 1);
      worker.wait({"done"});
    });
  TCPStore master("127.0.0.1", port, 3, true, kLong);
  EXPECT_EQ(master.port(), port);
  master.set("done", b("1"));
  for (auto& t : workers) t.join();
  EXPECT_EQ(master.get("joined"), b("2"));
}

TEST(TCPStore, WaitForWorkersTimeoutSaysHowManyJoined) {
  auto start = Clock::now();
  EXPECT_EQ(error_of([] { TCPStore("127.0.0.1", 0, 3, true, 300ms); }),
            "[TCPStore] timed out after 300 ms waiting for workers: 1 of 3 joined");
  EXPECT_LT(since(start), 2s);
}

TEST(TCPStore, ConnectTimeoutNamesHostAndPort) {
  uint16_t port = free_port();
  std::string error = error_of([&] { TCPStore("127.0.0.1", port, std::nullopt, false, 300ms); });
  EXPECT_TRUE(error.starts_with("[TCPStore] could not connect to 127.0.0.1:" + std::to_string(port) + " within 300 ms"))
      << error;
}

TEST(TCPStore, ATimedOutGetLeavesTheConnectionInStep) {
  TCPStore master("127.0.0.1", 0, std::nullopt, true, kLong);
  TCPStore client("127.0.0.1", master.port(), std::nullopt, false, kShort);
  EXPECT_EQ(error_of([&] { client.get("later"); }), "[TCPStore.get] timed out after 200 ms waiting for keys: later");
  master.set("later", b("1"));
  client.set("other", b("2"));
  EXPECT_EQ(client.get("other"), b("2"));
  EXPECT_EQ(client.get("later"), b("1"));
}

TEST(TCPStore, AClientWhoseServerIsGoneGetsAnError) {
  auto master = std::make_unique<TCPStore>("127.0.0.1", 0, std::nullopt, true, kLong);
  TCPStore client("127.0.0.1", master->port(), std::nullopt, false, kLong);
  client.set("k", b("v"));
  master.reset();
  std::string first = error_of([&] { client.set("k", b("w")); });
  EXPECT_TRUE(first.starts_with("[TCPStore.set] lost the connection to the store at 127.0.0.1:")) << first;
  // Later calls fail at once (and no send on a dead socket raises SIGPIPE).
  for (int i = 0; i < 3; ++i) EXPECT_THROW(client.get("k"), Error);
}

TEST(TCPStore, MasterDestroyedWhileAClientWaits) {
  auto master = std::make_unique<TCPStore>("127.0.0.1", 0, std::nullopt, true, kLong);
  TCPStore client("127.0.0.1", master->port(), std::nullopt, false, kLong);
  auto start = Clock::now();
  std::string error;
  std::thread waiter([&] { error = error_of([&] { client.wait({"never"}); }); });
  std::this_thread::sleep_for(100ms);
  master.reset();
  waiter.join();
  EXPECT_TRUE(error.starts_with("[TCPStore.wait] lost the connection")) << error;
  EXPECT_LT(since(start), 2s);
}

TEST(TCPStore, AStrangerOnThePortDoesNotStopTheServer) {
  TCPStore master("127.0.0.1", 0, std::nullopt, true, kLong);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(master.port());
  timeval two_seconds{2, 0};  // a server that kept the stranger must not hang the test
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof two_seconds);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const char garbage[] = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_GT(::send(fd, garbage, sizeof garbage, MSG_NOSIGNAL), 0);
  char c;
  EXPECT_LE(::recv(fd, &c, 1, 0), 0);  // the server hangs up on it
  ::close(fd);
  master.set("k", b("v"));
  EXPECT_EQ(master.get("k"), b("v"));
}

TEST(FileStore, TwoProcessesShareKeysThroughOneFile) {
  TempPath file;
  auto parent = std::make_unique<FileStore>(file.path, 2, kLong);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int code = 0;
    try {
      FileStore child(file.path, 2, kLong);
      child.set("from_child", b("hello"));
      if (child.get("from_parent") != b("hi")) code = 1;
      child.add("counter", 10);
    } catch (...) {
      code = 2;
    }
    ::_exit(code);
  }
  parent->set("from_parent", b("hi"));
  EXPECT_EQ(parent->get("from_child"), b("hello"));
  parent->add("counter", 1);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(parent->get("counter"), b("11"));
  EXPECT_TRUE(exists(file.path));
  parent.reset();  // the second of two instances
  EXPECT_FALSE(exists(file.path));
}

TEST(FileStore, TheLastOfNumWorkersInstancesRemovesTheFile) {
  TempPath file;
  auto a = std::make_unique<FileStore>(file.path, 2, kLong);
  auto b = std::make_unique<FileStore>(file.path, 2, kLong);
  a->set("k", to_bytes("v"));
  a.reset();
  EXPECT_TRUE(exists(file.path));
  EXPECT_EQ(b->get("k"), to_bytes("v"));
  b.reset();
  EXPECT_FALSE(exists(file.path));
}

TEST(FileStore, WithoutNumWorkersTheFileStays) {
  TempPath file;
  std::make_unique<FileStore>(file.path, -1, kLong)->set("k", to_bytes("v"));
  EXPECT_TRUE(exists(file.path));
  EXPECT_EQ(FileStore(file.path, -1, kLong).get("k"), to_bytes("v"));
}

TEST(FileStore, AnUnopenablePathIsAnError) {
  EXPECT_TRUE(error_of([] {
                FileStore("/nonexistent/dir/store", -1, kShort);
              }).starts_with("[FileStore] cannot open '/nonexistent/dir/store'"));
}

}  // namespace
}  // namespace tp::distributed

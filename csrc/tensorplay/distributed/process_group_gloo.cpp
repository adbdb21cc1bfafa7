#include "tensorplay/distributed/process_group_gloo.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/scatter.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <thread>

#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/core/error.h"
#include "tensorplay/distributed/reduce_function.h"
#include "tensorplay/ops/ops.h"

namespace tp::distributed {
namespace {

// Gloo's rendezvous reads and writes its keys through Gloo's own store interface.
class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(StorePtr store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    Bytes value = store_->get(key);
    return {value.begin(), value.end()};
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  StorePtr store_;
};

// Gloo's options take typed pointers only to learn the element size: any type of that size does.
struct Bytes16 {
  uint64_t lo, hi;
};
template <class F>
void with_element_type(int64_t itemsize, F&& f) {
  switch (itemsize) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    case 16:
      return f(Bytes16{});
  }
  TP_FAIL("[distributed] no element type of ", itemsize, " bytes");
}

template <class T>
T* typed(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// Send and receive slots, apart from the ones Gloo's collectives use (prefixes 0x01 to 0x08).
constexpr uint8_t kSendRecvSlotPrefix = 0x40;
constexpr uint8_t kMonitoredBarrierSlotPrefix = 0x41;
const uint64_t kFingerprintSlot = gloo::Slot::build(0x42, 0);

std::string shape_string(ScalarType dtype, IntArrayRef sizes) {
  std::string s(name(dtype));
  s += "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

// The ranks' view of one collective, compared across ranks before Gloo is called.
struct Fingerprint {
  static constexpr int kMaxDims = 8;
  uint64_t sequence = 0;
  int32_t op = 0;  // index into kCollectiveNames
  int32_t dtype = 0;
  int32_t root = -1;
  int32_t reduce_op = -1;
  int32_t ndim = 0;
  int32_t unused = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};

  bool operator==(const Fingerprint&) const = default;
};

constexpr const char* kCollectiveNames[] = {"all_reduce",
                                            "broadcast",
                                            "reduce",
                                            "all_gather",
                                            "all_gather_into_tensor",
                                            "reduce_scatter_tensor",
                                            "gather",
                                            "scatter",
                                            "all_to_all_single",
                                            "barrier",
                                            "monitored_barrier"};
enum Collective {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kAllGatherIntoTensor,
  kReduceScatterTensor,
  kGather,
  kScatter,
  kAllToAllSingle,
  kBarrier,
  kMonitoredBarrier
};

// One collective as this rank called it: what the fingerprint and the error messages describe.
struct Call {
  Collective op;
  uint64_t sequence = 0;
  std::optional<Tensor> tensor;  // the per-rank buffer every rank must agree on
  int root = -1;
  std::optional<ReduceOp> reduce_op;

  Fingerprint fingerprint() const {
    Fingerprint f;
    f.sequence = sequence;
    f.op = op;
    f.root = root;
    f.reduce_op = reduce_op ? static_cast<int>(*reduce_op) : -1;
    if (tensor) {
      f.dtype = static_cast<int>(tensor->dtype());
      f.numel = tensor->numel();
      f.ndim = static_cast<int32_t>(tensor->dim());
      for (int64_t d = 0; d < std::min<int64_t>(tensor->dim(), Fingerprint::kMaxDims); ++d)
        f.sizes[d] = tensor->size(d);
    }
    return f;
  }

  // "all_reduce #17"
  std::string title() const { return std::string(kCollectiveNames[op]) + " #" + std::to_string(sequence); }
};

std::string describe(const Fingerprint& f) {
  std::string s = std::string(kCollectiveNames[f.op]) + " #" + std::to_string(f.sequence);
  if (f.reduce_op >= 0) s += " " + std::string(name(static_cast<ReduceOp>(f.reduce_op)));
  if (f.root >= 0) s += " root " + std::to_string(f.root);
  if (f.op != kBarrier && f.op != kMonitoredBarrier) {
    std::vector<int64_t> sizes(f.sizes, f.sizes + std::min(f.ndim, Fingerprint::kMaxDims));
    s += " " + shape_string(static_cast<ScalarType>(f.dtype), sizes);
    if (f.ndim > Fingerprint::kMaxDims) s += " (" + std::to_string(f.numel) + " elements)";
  }
  return s;
}

// The contiguous buffer Gloo reads and writes for t: t itself when it can be.
Tensor wire_buffer(const Tensor& t) { return t.contiguous(); }
// A buffer that is never t's own memory (for inputs a collective must leave as they were).
Tensor wire_copy(const Tensor& t) {
  Tensor buffer = empty(t.sizes(), t.dtype());
  copy_(buffer, t);
  return buffer;
}
void write_back(const Tensor& t, const Tensor& buffer) {
  if (!buffer.is_same(t)) copy_(t, buffer.view(t.sizes()));
}

void check_same(const char* op, const char* what, const Tensor& t, const Tensor& like) {
  TP_CHECK(t.dtype() == like.dtype() && std::ranges::equal(t.sizes(), like.sizes()), "[", op, "] ", what, " is ",
           shape_string(t.dtype(), t.sizes()), " but the input is ", shape_string(like.dtype(), like.sizes()));
}

// An error that leaves the group usable (the ranks disagreed before any data moved).
struct Mismatch : Error {
  using Error::Error;
};
// An error of ours after which Gloo's state is unknown (messages may still be in flight).
struct BreaksGroup : Error {
  using Error::Error;
};

}  // namespace

// The ranks' fingerprints of one call, on their way to every peer.
struct FingerprintExchange {
  std::vector<Fingerprint> all;  // by rank
  std::unique_ptr<gloo::transport::UnboundBuffer> sent;
  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> received;  // by rank
};

struct ProcessGroupGloo::Impl : std::enable_shared_from_this<ProcessGroupGloo::Impl> {
  Impl(StorePtr store, int rank, int size, Duration timeout, std::string hostname);
  ~Impl();

  // Runs run(tag) after the ranks agreed on call, in order with the calls before it; its Work
  // completes after. With async_op on the worker thread; without, before enqueue returns.
  WorkPtr enqueue(Call call, std::function<void(uint32_t tag)> run, std::vector<Tensor> result, bool async_op);
  struct Job {
    Call call;
    std::function<void(uint32_t)> run;
    WorkPtr work;
  };
  void work_loop();
  void run_if_next(const Work& work);
  Job take_front();  // with mutex held
  void execute(Job& job);
  std::exception_ptr run_job(Job& job);
  std::unique_ptr<FingerprintExchange> post_fingerprint_receives();
  void send_fingerprint(const Call& call, FingerprintExchange& exchange);
  void check_fingerprints(const Call& call, FingerprintExchange& exchange);
  std::string transport_error(const std::string& gloo_message) const;
  std::string ranks_absent_from(uint64_t sequence) const;
  [[noreturn]] void fail_broken() const;
  void join(Store& store) const;

  template <class Options>
  void common(Options& options, uint32_t tag) const {
    options.setTag(tag);
    options.setTimeout(timeout);
  }

  int rank, size;
  Duration timeout;
  StorePtr store;
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::vector<std::string> peer_addresses;  // by rank, as Gloo's error messages write them

  std::mutex mutex;
  std::condition_variable queue_cv;
  std::deque<Job> queue;
  bool running = false;  // a job is running (on the worker, or on a caller that waits for it)
  bool stopping = false;
  uint64_t next_sequence = 0;
  std::string broken;  // the first error that killed Gloo's connections
  std::vector<char> barrier_bytes;
  // Whether the ranks compare their calls before each collective: unless TP_DISTRIBUTED_DEBUG=OFF,
  // which saves a message exchange per collective and lets a mismatch abort the process in Gloo.
  bool check_calls = true;
  // The receives of the next checked call's fingerprints, posted when the last one's arrived, so that
  // a fingerprint leaves at once when its call is made (Gloo sends once the receiver has posted).
  std::unique_ptr<FingerprintExchange> next_fingerprints;
  std::thread worker;
};

// A collective's Work: waiting for it runs it on the waiting thread when it is next in line.
class CollectiveWork : public Work {
 public:
  CollectiveWork(std::vector<Tensor> result, std::weak_ptr<ProcessGroupGloo::Impl> group)
      : Work(std::move(result)), group_(std::move(group)) {}

  bool wait(Duration timeout) override {
    if (auto group = group_.lock()) group->run_if_next(*this);
    return Work::wait(timeout);
  }

 private:
  std::weak_ptr<ProcessGroupGloo::Impl> group_;
};

// Gloo's event loop thread does not sleep while another thread holds the lock of a connection that
// has data for it: epoll_wait reports the data again at once, and the loop tries again. When the loop
// thread, woken by a peer's message, preempts the thread of this process that holds the lock (in the
// middle of a send), it spins on that CPU until its time slice ends, which on a machine with one rank
// per core is most of a small collective's time. As SCHED_BATCH (the
// scheduler's policy for threads that do not preempt on waking, with a normal share of the CPU) the
// loop thread runs when the thread it woke for blocks or at the next tick, never in the middle of a
// send. A thread takes its policy from the thread that starts it: Gloo's device starts the loop from a
// short-lived thread of its own, so that no other thread changes policy. (BENCHMARKS.md has the
// figures, and the cost on a machine with more busy processes than cores.)
static std::shared_ptr<gloo::transport::Device> create_device(const gloo::transport::tcp::attr& attr) {
  std::shared_ptr<gloo::transport::Device> device;
  std::exception_ptr error;
  std::thread([&] {
    sched_param normal_priority{};
    sched_setscheduler(0, SCHED_BATCH, &normal_priority);  // this thread only; where refused, as it was
    try {
      device = gloo::transport::tcp::CreateDevice(attr);
    } catch (...) {
      error = std::current_exception();
    }
  }).join();
  if (error) std::rethrow_exception(error);
  return device;
}

ProcessGroupGloo::Impl::Impl(StorePtr store_, int rank_, int size_, Duration timeout_, std::string hostname)
    : rank(rank_), size(size_), timeout(timeout_), store(std::move(store_)) {
  TP_CHECK_VALUE(size >= 1, "[ProcessGroupGloo] world size must be positive, got ", size);
  TP_CHECK_VALUE(rank >= 0 && rank < size, "[ProcessGroupGloo] rank ", rank, " is out of range for world size ", size);
  // A peer that goes away must be an error on this rank, not a signal that kills it.
  struct sigaction current{};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);

  join(*store);
  gloo::transport::tcp::attr attr;
  if (hostname.empty()) {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    hostname = name;
  }
  attr.hostname = hostname;
  try {
    auto device = create_device(attr);
    context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);
    GlooStore gloo_store(store);
    context->connectFullMesh(gloo_store, device);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    TP_FAIL("[init_process_group] rank ", rank, ": could not connect to the other ranks from ", hostname, ": ",
            e.what());
  }
  // Gloo names a failed peer by the address its end of the connection listens on (one per pair):
  // learn each peer's, to name the rank instead.
  auto key = [](int from, int to) { return "address/" + std::to_string(from) + "/" + std::to_string(to); };
  for (int r = 0; r < size; ++r)
    if (r != rank) store->set(key(rank, r), to_bytes(context->getPair(r)->address().str()));
  peer_addresses.resize(size);
  for (int r = 0; r < size; ++r)
    if (r != rank) peer_addresses[r] = to_string(store->get(key(r, rank)));
  barrier_bytes.resize(size);
  const char* debug = std::getenv("TP_DISTRIBUTED_DEBUG");
  check_calls = !(debug && std::string_view(debug) == "OFF");
  worker = std::thread([this] { work_loop(); });
}

ProcessGroupGloo::Impl::~Impl() {
  {
    std::lock_guard lock(mutex);
    stopping = true;
  }
  queue_cv.notify_all();
  worker.join();
}

// Every rank checks in under its own key, so that a rendezvous that times out can say who is missing.
void ProcessGroupGloo::Impl::join(Store& s) const {
  s.set("joined/" + std::to_string(rank), to_bytes("1"));
  std::vector<std::string> keys;
  for (int r = 0; r < size; ++r) keys.push_back("joined/" + std::to_string(r));
  try {
    s.wait(keys, timeout);
  } catch (const Error&) {
    std::vector<int> missing;
    for (int r = 0; r < size; ++r)
      if (!s.check({keys[r]})) missing.push_back(r);
    if (missing.empty()) throw;
    std::string names;
    for (int r : missing) names += (names.empty() ? "" : ", ") + std::to_string(r);
    TP_CHECK_KIND(ErrorKind::DistStore, false, "[init_process_group] rank ", rank, ": timed out after ",
                  timeout.count(), " ms: ", size - missing.size(), " of ", size, " joined; waiting for rank",
                  missing.size() > 1 ? "s " : " ", names);
  }
}

WorkPtr ProcessGroupGloo::Impl::enqueue(Call call, std::function<void(uint32_t)> run, std::vector<Tensor> result,
                                        bool async_op) {
  auto work = std::make_shared<CollectiveWork>(std::move(result), weak_from_this());
  {
    std::lock_guard lock(mutex);
    if (!broken.empty()) fail_broken();
    call.sequence = next_sequence++;
    queue.push_back({std::move(call), std::move(run), work});
  }
  // A caller that waits at once runs the call itself (CollectiveWork::wait) unless calls are queued
  // ahead of it, which the worker is already running: waking the worker would only cost a thread
  // wake-up, most of a small collective's time on a machine whose idle CPUs wake slowly.
  if (async_op)
    queue_cv.notify_one();
  else
    work->wait(Work::kNoTimeout);
  return work;
}

void ProcessGroupGloo::Impl::fail_broken() const {
  TP_FAIL(broken, " (the process group is broken since this error; create a new one)");
}

void ProcessGroupGloo::Impl::work_loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex);
      queue_cv.wait(lock, [&] { return stopping || (!queue.empty() && !running); });
      if (queue.empty()) return;
      job = take_front();
    }
    execute(job);
  }
}

// Waking the worker thread, and then the waiting caller, costs more than a small collective takes
// (most of all on a virtual machine, whose idle CPUs wake slowly): a caller that waits for the next
// job to run runs it itself. Jobs still run one at a time, in order.
void ProcessGroupGloo::Impl::run_if_next(const Work& work) {
  Job job;
  {
    std::lock_guard lock(mutex);
    if (running || queue.empty() || queue.front().work.get() != &work) return;
    job = take_front();
  }
  execute(job);
}

ProcessGroupGloo::Impl::Job ProcessGroupGloo::Impl::take_front() {
  Job job = std::move(queue.front());
  queue.pop_front();
  running = true;
  return job;
}

void ProcessGroupGloo::Impl::execute(Job& job) {
  std::exception_ptr error = run_job(job);
  {
    std::lock_guard lock(mutex);
    running = false;
  }
  queue_cv.notify_all();
  job.work->finish(error);
}

std::exception_ptr ProcessGroupGloo::Impl::run_job(Job& job) {
  const Call& call = job.call;
  std::string header = "[" + call.title() + "] rank " + std::to_string(rank) + ": ";
  std::string tensor = call.tensor ? shape_string(call.tensor->dtype(), call.tensor->sizes()) + ", " : "";
  std::string trailer = " (" + tensor + "world " + std::to_string(size) + ")";
  // The tag names the data messages of one collective (the fingerprints travel in a slot of their own).
  auto tag = static_cast<uint32_t>(call.sequence);
  try {
    {
      std::lock_guard lock(mutex);
      if (!broken.empty()) fail_broken();
    }
    NoGradGuard no_grad;
    // A monitored barrier is there to find the ranks that do not arrive: it must not wait for them.
    if (check_calls && size > 1 && call.op != kMonitoredBarrier) {
      std::unique_ptr<FingerprintExchange> exchange =
          next_fingerprints ? std::move(next_fingerprints) : post_fingerprint_receives();
      send_fingerprint(call, *exchange);
      check_fingerprints(call, *exchange);
      next_fingerprints = post_fingerprint_receives();
    }
    job.run(tag);
    return nullptr;
  } catch (const Mismatch&) {
    return std::current_exception();
  } catch (const BreaksGroup& e) {
    std::string message = header + e.what() + trailer;
    std::lock_guard lock(mutex);
    if (broken.empty()) broken = message;
    return std::make_exception_ptr(Error(ErrorKind::Runtime, message));
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with("[")) return std::current_exception();
    return std::make_exception_ptr(Error(e.kind(), header + e.what() + trailer));
  } catch (const std::exception& e) {
    // Gloo's own errors (gloo::IoException, gloo::EnforceNotMet): its connections are dead now.
    std::string what = transport_error(e.what());
    if (what.starts_with("timed out")) what += ranks_absent_from(call.sequence);
    std::string message = header + what + trailer;
    std::lock_guard lock(mutex);
    if (broken.empty()) broken = message;
    return std::make_exception_ptr(Error(ErrorKind::Runtime, message));
  }
}

// Every rank sends its fingerprint straight to every other: one message's latency, where Gloo's
// allgather takes several steps. All fingerprints travel in one slot, matched in order per peer.
std::unique_ptr<FingerprintExchange> ProcessGroupGloo::Impl::post_fingerprint_receives() {
  auto exchange = std::make_unique<FingerprintExchange>();
  exchange->all.resize(size);
  exchange->received.resize(size);
  try {
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      exchange->received[r] = context->createUnboundBuffer(&exchange->all[r], sizeof(Fingerprint));
      exchange->received[r]->recv(r, kFingerprintSlot);
    }
  } catch (const std::exception&) {
    // Gloo's connections are gone: the call's own turn reports it, as the group's error.
  }
  return exchange;
}

void ProcessGroupGloo::Impl::send_fingerprint(const Call& call, FingerprintExchange& exchange) {
  exchange.all[rank] = call.fingerprint();
  try {
    exchange.sent = context->createUnboundBuffer(&exchange.all[rank], sizeof(Fingerprint));
    for (int r = 0; r < size; ++r)
      if (r != rank) exchange.sent->send(r, kFingerprintSlot);
  } catch (const std::exception&) {
    // As in post_fingerprint_receives: check_fingerprints reports it.
  }
}

void ProcessGroupGloo::Impl::check_fingerprints(const Call& call, FingerprintExchange& exchange) {
  std::vector<Fingerprint>& all = exchange.all;
  const Fingerprint& mine = all[rank];
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    if (!exchange.received[r] || !exchange.sent) GLOO_THROW_IO_EXCEPTION("the fingerprints of the call were not sent");
    exchange.received[r]->waitRecv(timeout);
  }
  for (int r = 0; r < size; ++r)
    if (r != rank) exchange.sent->waitSend(timeout);
  for (int r = 0; r < size; ++r) {
    if (all[r] == mine) continue;
    std::string message =
        "[" + call.title() + "] rank " + std::to_string(rank) + ": the ranks called different collectives:";
    for (int q = 0; q < size; ++q) message += (q ? "; rank " : " rank ") + std::to_string(q) + " " + describe(all[q]);
    throw Mismatch(ErrorKind::Runtime, message);
  }
}

// After a timeout in collective #sequence, every rank that was in it says so in the store; the ranks
// that do not within a grace period never reached it (a rank hung in its own code, or stopped).
std::string ProcessGroupGloo::Impl::ranks_absent_from(uint64_t sequence) const {
  std::string prefix = "timed_out/" + std::to_string(sequence) + "/";
  std::string absent;
  try {
    store->set(prefix + std::to_string(rank), to_bytes("1"));
    auto deadline = std::chrono::steady_clock::now() + std::min(timeout, Duration(5000));
    do {
      absent.clear();
      for (int r = 0; r < size; ++r)
        if (!store->check({prefix + std::to_string(r)})) absent += (absent.empty() ? "" : ", ") + std::to_string(r);
      if (absent.empty()) return "";
      std::this_thread::sleep_for(Duration(20));
    } while (std::chrono::steady_clock::now() < deadline);
  } catch (const std::exception&) {
    return "";  // the store is gone too: nothing more to learn
  }
  return (absent.find(',') == std::string::npos ? "; rank " : "; ranks ") + absent + " never reached it";
}

// Gloo's messages name a peer by its address ("Connection closed by peer [10.0.0.2]:41234"), or not
// at all; say which rank that is.
std::string ProcessGroupGloo::Impl::transport_error(const std::string& gloo_message) const {
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    if (gloo_message.find(peer_addresses[r]) == std::string::npos) continue;
    if (gloo_message.find("closed") != std::string::npos || gloo_message.find("reset") != std::string::npos ||
        gloo_message.find("Broken pipe") != std::string::npos)
      return "rank " + std::to_string(r) + " closed the connection";
    return "rank " + std::to_string(r) + ": " + gloo_message;
  }
  if (gloo_message.find("Timed out") != std::string::npos)
    return "timed out after " + std::to_string(timeout.count()) + " ms waiting for the other ranks";
  return gloo_message;
}

// ---- the process group ----

ProcessGroupGloo::ProcessGroupGloo(StorePtr store, int rank, int size, Duration timeout, std::string hostname)
    : ProcessGroup(rank, size),
      impl_(std::make_shared<Impl>(std::move(store), rank, size, timeout, std::move(hostname))) {}

ProcessGroupGloo::~ProcessGroupGloo() = default;

Duration ProcessGroupGloo::timeout() const { return impl_->timeout; }

uint64_t ProcessGroupGloo::sequence_number() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->next_sequence;
}

// Gloo's all-reduce of buffer (contiguous, in the dtype it is reduced in), in place.
static void all_reduce_in_place(ProcessGroupGloo::Impl& g, const Tensor& buffer, ReduceFunction fn, uint32_t tag) {
  if (buffer.numel() == 0 || g.size == 1) return;
  gloo::AllreduceOptions options(g.context);
  with_element_type(buffer.itemsize(), [&]<class T>(T) { options.setOutput(typed<T>(buffer), buffer.numel()); });
  options.setReduceFunction(fn);
  g.common(options, tag);
  gloo::allreduce(options);
}

// 16-bit floats travel as themselves (half float32's bytes) and are reduced in float32, rounded once.
// Rank r owns block r of a flat buffer of world size blocks: an all-to-all brings it every rank's
// copy of that block, which it reduces in rank order in float32. This returns the reduced block (AVG
// divided), not yet rounded.
static Tensor reduce_own_block_in_float32(ProcessGroupGloo::Impl& g, const Tensor& blocks, ReduceFunction fn,
                                          ReduceOp op, uint32_t tag) {
  int64_t block = blocks.numel() / g.size;
  Tensor received = empty({g.size, block}, blocks.dtype());
  gloo::AlltoallOptions options(g.context);
  options.setInput(typed<uint16_t>(blocks), blocks.numel());
  options.setOutput(typed<uint16_t>(received), received.numel());
  g.common(options, tag);
  gloo::alltoall(options);
  Tensor sum = received.to(ScalarType::Float32);
  float* rows = typed<float>(sum);
  for (int r = 1; r < g.size; ++r) fn(rows, rows, rows + r * block, static_cast<size_t>(block));
  Tensor mine = select(sum, 0, 0);
  if (op == ReduceOp::AVG) div_(mine, Scalar(static_cast<int64_t>(g.size)));
  return mine;
}

// Whether reducing t moves 16-bit floats (nothing moves for an empty tensor or a world of one).
static bool reduces_16bit(const ProcessGroupGloo::Impl& g, const Tensor& t) {
  return is_reduced_float(t.dtype()) && t.numel() > 0 && g.size > 1;
}

// A flat buffer of t's elements in one equal block per rank: t's own memory where that is allowed and
// t splits evenly, a zero-padded copy otherwise.
static Tensor equal_blocks(const Tensor& t, int size, bool may_alias) {
  int64_t n = t.numel();
  if (may_alias && t.is_contiguous() && n % size == 0) return t.view({n});
  Tensor padded = zeros({(n + size - 1) / size * size}, t.dtype());
  copy_(narrow(padded, 0, 0, n), t.reshape({n}));
  return padded;
}

// The all-reduce of 16-bit floats in equal blocks, in place: each rank reduces its block, then the
// rounded blocks are all-gathered.
static void all_reduce_16bit(ProcessGroupGloo::Impl& g, const Tensor& blocks, ReduceFunction fn, ReduceOp op,
                             uint32_t tag) {
  Tensor mine = reduce_own_block_in_float32(g, blocks, fn, op, tag).to(blocks.dtype());
  gloo::AllgatherOptions options(g.context);
  options.setInput(typed<uint16_t>(mine), mine.numel());
  options.setOutput(typed<uint16_t>(blocks), blocks.numel());
  g.common(options, tag);
  gloo::allgather(options);
}

// t's values from the front of a flat buffer, unless the buffer is t's own memory.
static void write_back_flat(const Tensor& t, const Tensor& flat) {
  if (flat.data_ptr() != t.data_ptr()) copy_(t, narrow(flat, 0, 0, t.numel()).view(t.sizes()));
}

WorkPtr ProcessGroupGloo::all_reduce(const Tensor& tensor, ReduceOp op, bool async_op) {
  ReduceFunction fn = reduce_function("all_reduce", tensor.dtype(), op);
  Impl& g = *impl_;
  auto run = [&g, tensor, op, fn](uint32_t tag) {
    if (reduces_16bit(g, tensor)) {
      Tensor blocks = equal_blocks(tensor, g.size, true);
      all_reduce_16bit(g, blocks, fn, op, tag);
      return write_back_flat(tensor, blocks);
    }
    Tensor buffer = wire_buffer(tensor);
    all_reduce_in_place(g, buffer, fn, tag);
    if (op == ReduceOp::AVG) div_(buffer, Scalar(static_cast<int64_t>(g.size)));
    write_back(tensor, buffer);
  };
  return g.enqueue({kAllReduce, 0, tensor, -1, op}, run, {tensor}, async_op);
}

WorkPtr ProcessGroupGloo::broadcast(const Tensor& tensor, int root, bool async_op) {
  TP_CHECK(root >= 0 && root < size(), "[broadcast] root ", root, " is out of range for world size ", size());
  Impl& g = *impl_;
  auto run = [&g, tensor, root](uint32_t tag) {
    Tensor buffer = wire_buffer(tensor);
    if (buffer.numel() > 0 && g.size > 1) {
      gloo::BroadcastOptions options(g.context);
      with_element_type(buffer.itemsize(), [&]<class T>(T) { options.setOutput(typed<T>(buffer), buffer.numel()); });
      options.setRoot(root);
      g.common(options, tag);
      gloo::broadcast(options);
    }
    write_back(tensor, buffer);
  };
  return g.enqueue({kBroadcast, 0, tensor, root, {}}, run, {tensor}, async_op);
}

WorkPtr ProcessGroupGloo::reduce(const Tensor& tensor, int root, ReduceOp op, bool async_op) {
  TP_CHECK(root >= 0 && root < size(), "[reduce] root ", root, " is out of range for world size ", size());
  ReduceFunction fn = reduce_function("reduce", tensor.dtype(), op);
  Impl& g = *impl_;
  auto run = [&g, tensor, root, op, fn](uint32_t tag) {
    // Gloo leaves partial sums in the other ranks' buffers: only the root's tensor is written.
    bool is_root = g.rank == root;
    if (reduces_16bit(g, tensor)) {
      Tensor blocks = equal_blocks(tensor, g.size, is_root);
      all_reduce_16bit(g, blocks, fn, op, tag);
      if (is_root) write_back_flat(tensor, blocks);
      return;
    }
    Tensor buffer = is_root ? wire_buffer(tensor) : wire_copy(tensor);
    if (buffer.numel() > 0 && g.size > 1) {
      gloo::ReduceOptions options(g.context);
      with_element_type(buffer.itemsize(), [&]<class T>(T) { options.setOutput(typed<T>(buffer), buffer.numel()); });
      options.setRoot(root);
      options.setReduceFunction(fn);
      g.common(options, tag);
      gloo::reduce(options);
    }
    if (!is_root) return;
    if (op == ReduceOp::AVG) div_(buffer, Scalar(static_cast<int64_t>(g.size)));
    write_back(tensor, buffer);
  };
  return g.enqueue({kReduce, 0, tensor, root, op}, run, {tensor}, async_op);
}

// The collectives that gather: every rank's block lands in one contiguous buffer of size blocks.
static void all_gather_blocks(ProcessGroupGloo::Impl& g, const Tensor& input, const Tensor& flat, uint32_t tag) {
  if (input.numel() == 0) return;  // Gloo divides by the element count
  if (g.size == 1) {
    copy_(flat.view(input.sizes()), input);
    return;
  }
  Tensor in = input.contiguous();
  gloo::AllgatherOptions options(g.context);
  with_element_type(in.itemsize(), [&]<class T>(T) {
    options.setInput(typed<T>(in), in.numel());
    options.setOutput(typed<T>(flat), flat.numel());
  });
  g.common(options, tag);
  gloo::allgather(options);
}

WorkPtr ProcessGroupGloo::all_gather(const std::vector<Tensor>& outputs, const Tensor& input, bool async_op) {
  TP_CHECK(static_cast<int>(outputs.size()) == size(), "[all_gather] tensor_list has ", outputs.size(),
           " tensors but the world size is ", size());
  for (const Tensor& out : outputs) check_same("all_gather", "an output tensor", out, input);
  Impl& g = *impl_;
  return g.enqueue(
      {kAllGather, 0, input, -1, {}},
      [&g, outputs, input](uint32_t tag) {
        Tensor flat = empty({g.size * input.numel()}, input.dtype());
        all_gather_blocks(g, input, flat, tag);
        int64_t n = input.numel();
        for (int r = 0; r < g.size; ++r) copy_(outputs[r], narrow(flat, 0, r * n, n).view(input.sizes()));
      },
      outputs, async_op);
}

WorkPtr ProcessGroupGloo::all_gather_into_tensor(const Tensor& output, const Tensor& input, bool async_op) {
  TP_CHECK(output.dtype() == input.dtype() && output.numel() == size() * input.numel(),
           "[all_gather_into_tensor] the output is ", shape_string(output.dtype(), output.sizes()),
           " but must hold world size ", size(), " times the input ", shape_string(input.dtype(), input.sizes()));
  Impl& g = *impl_;
  auto run = [&g, output, input](uint32_t tag) {
    Tensor flat = output.is_contiguous() ? output.view({output.numel()}) : empty({output.numel()}, output.dtype());
    all_gather_blocks(g, input, flat, tag);
    write_back(output, flat);
  };
  return g.enqueue({kAllGatherIntoTensor, 0, input, -1, {}}, run, {output}, async_op);
}

WorkPtr ProcessGroupGloo::reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op, bool async_op) {
  TP_CHECK(output.dtype() == input.dtype() && input.numel() == size() * output.numel(),
           "[reduce_scatter_tensor] the input is ", shape_string(input.dtype(), input.sizes()),
           " but must hold world size ", size(), " times the output ", shape_string(output.dtype(), output.sizes()));
  ReduceFunction fn = reduce_function("reduce_scatter_tensor", input.dtype(), op);
  Impl& g = *impl_;
  auto run = [&g, output, input, op, fn](uint32_t tag) {
    if (reduces_16bit(g, input)) {
      Tensor blocks = input.contiguous().view({input.numel()});
      copy_(output, reduce_own_block_in_float32(g, blocks, fn, op, tag).view(output.sizes()));
      return;
    }
    // Gloo has no reduce-scatter of this form: all-reduce a copy and keep this rank's block.
    Tensor buffer = wire_copy(input).view({input.numel()});
    all_reduce_in_place(g, buffer, fn, tag);
    int64_t n = output.numel();
    Tensor mine = narrow(buffer, 0, g.rank * n, n);
    if (op == ReduceOp::AVG) div_(mine, Scalar(static_cast<int64_t>(g.size)));
    copy_(output, mine.view(output.sizes()));
  };
  return g.enqueue({kReduceScatterTensor, 0, input, -1, op}, run, {output}, async_op);
}

WorkPtr ProcessGroupGloo::gather(const std::vector<Tensor>& outputs, const Tensor& input, int root, bool async_op) {
  TP_CHECK(root >= 0 && root < size(), "[gather] root ", root, " is out of range for world size ", size());
  if (rank() == root) {
    TP_CHECK(static_cast<int>(outputs.size()) == size(), "[gather] gather_list has ", outputs.size(),
             " tensors but the world size is ", size());
    for (const Tensor& out : outputs) check_same("gather", "a gather_list tensor", out, input);
  }
  Impl& g = *impl_;
  return g.enqueue(
      {kGather, 0, input, root, {}},
      [&g, outputs, input, root](uint32_t tag) {
        bool is_root = g.rank == root;
        int64_t n = input.numel();
        Tensor flat = is_root ? empty({g.size * n}, input.dtype()) : Tensor();
        if (n > 0 && g.size > 1) {
          Tensor in = input.contiguous();
          gloo::GatherOptions options(g.context);
          with_element_type(in.itemsize(), [&]<class T>(T) {
            options.setInput(typed<T>(in), n);
            if (is_root) options.setOutput(typed<T>(flat), flat.numel());
          });
          options.setRoot(root);
          g.common(options, tag);
          gloo::gather(options);
        } else if (is_root && n > 0) {
          copy_(flat.view(input.sizes()), input);
        }
        if (is_root)
          for (int r = 0; r < g.size; ++r) copy_(outputs[r], narrow(flat, 0, r * n, n).view(input.sizes()));
      },
      outputs, async_op);
}

WorkPtr ProcessGroupGloo::scatter(const Tensor& output, const std::vector<Tensor>& inputs, int root, bool async_op) {
  TP_CHECK(root >= 0 && root < size(), "[scatter] root ", root, " is out of range for world size ", size());
  if (rank() == root) {
    TP_CHECK(static_cast<int>(inputs.size()) == size(), "[scatter] scatter_list has ", inputs.size(),
             " tensors but the world size is ", size());
    for (const Tensor& in : inputs) check_same("scatter", "a scatter_list tensor", in, output);
  }
  Impl& g = *impl_;
  auto run = [&g, output, inputs, root](uint32_t tag) {
    Tensor buffer = wire_buffer(output);
    int64_t n = output.numel();
    if (n > 0 && g.size > 1) {
      std::vector<Tensor> ins;
      for (const Tensor& in : inputs) ins.push_back(in.contiguous());
      gloo::ScatterOptions options(g.context);
      with_element_type(buffer.itemsize(), [&]<class T>(T) {
        if (!ins.empty()) {
          std::vector<T*> pointers;
          for (const Tensor& in : ins) pointers.push_back(typed<T>(in));
          options.setInputs(pointers, n);
        }
        options.setOutput(typed<T>(buffer), n);
      });
      options.setRoot(root);
      g.common(options, tag);
      gloo::scatter(options);
    } else if (g.rank == root && n > 0) {
      copy_(buffer, inputs[root]);
    }
    write_back(output, buffer);
  };
  return g.enqueue({kScatter, 0, output, root, {}}, run, {output}, async_op);
}

// Rows per rank along t's first dimension: splits, or equal blocks where splits is empty (PyTorch's
// checks and words).
static std::vector<int64_t> rows_per_rank(const char* what, const Tensor& t, IntArrayRef splits, int size) {
  const int64_t rows = t.dim() > 0 ? t.size(0) : 0;
  if (splits.empty()) {
    TP_CHECK(t.dim() > 0 && rows % size == 0, "[all_to_all_single] Tensor's dim 0 does not divide equally across ",
             "group size: the ", what, " has ", rows, " rows for world size ", size);
    return std::vector<int64_t>(size, rows / size);
  }
  TP_CHECK(static_cast<int>(splits.size()) == size, "[all_to_all_single] Number of tensor splits not equal to ",
           "group size: ", what, "_split_sizes has ", splits.size(), " sizes for world size ", size);
  int64_t total = 0;
  for (int64_t rows_to : splits) {
    TP_CHECK(rows_to >= 0, "[all_to_all_single] ", what, "_split_sizes ", to_string(splits), " has a negative size");
    total += rows_to;
  }
  TP_CHECK(t.dim() > 0 && total == rows, "[all_to_all_single] Split sizes doesn't match total dim 0 size: ", what,
           "_split_sizes ", to_string(splits), " add up to ", total, " but the ", what, " has ", rows, " rows");
  return {splits.begin(), splits.end()};
}

// Gloo aborts the process when a receive and its send differ in size: before any data moves, every
// rank learns every rank's splits, and all of them raise if one rank sends other than its peer expects.
// Returns whether any rows move at all.
static bool check_splits_agree(ProcessGroupGloo::Impl& g, const std::vector<int64_t>& out_rows,
                               const std::vector<int64_t>& in_rows, uint32_t tag) {
  std::vector<int64_t> mine(in_rows);
  mine.insert(mine.end(), out_rows.begin(), out_rows.end());
  std::vector<int64_t> all = mine;
  if (g.size > 1) {
    all.resize(2 * g.size * g.size);
    gloo::AllgatherOptions options(g.context);
    options.setInput(mine.data(), mine.size());
    options.setOutput(all.data(), all.size());
    g.common(options, tag);
    gloo::allgather(options);
  }
  auto sends = [&](int src, int dst) { return all[2 * g.size * src + dst]; };
  auto expects = [&](int dst, int src) { return all[2 * g.size * dst + g.size + src]; };
  for (int src = 0; src < g.size; ++src)
    for (int dst = 0; dst < g.size; ++dst)
      if (sends(src, dst) != expects(dst, src))
        throw Mismatch(ErrorKind::Runtime, "[all_to_all_single #" + std::to_string(tag) + "] rank " +
                                               std::to_string(g.rank) + ": rank " + std::to_string(src) + " sends " +
                                               std::to_string(sends(src, dst)) + " rows to rank " +
                                               std::to_string(dst) + ", whose output_split_sizes expect " +
                                               std::to_string(expects(dst, src)));
  return std::ranges::any_of(all, [](int64_t rows) { return rows > 0; });
}

WorkPtr ProcessGroupGloo::all_to_all_single(const Tensor& output, const Tensor& input, IntArrayRef output_splits,
                                            IntArrayRef input_splits, bool async_op) {
  TP_CHECK(output.dtype() == input.dtype() && output.dim() == input.dim() && output.dim() > 0 &&
               std::ranges::equal(output.sizes().subspan(1), input.sizes().subspan(1)),
           "[all_to_all_single] the output is ", shape_string(output.dtype(), output.sizes()), " but the input is ",
           shape_string(input.dtype(), input.sizes()), ": they must agree but in their first dimension");
  std::vector<int64_t> in_rows = rows_per_rank("input", input, input_splits, size());
  std::vector<int64_t> out_rows = rows_per_rank("output", output, output_splits, size());
  int64_t row = 1;  // elements per row
  for (int64_t d : input.sizes().subspan(1)) row *= d;
  Impl& g = *impl_;
  auto run = [&g, output, input, in_rows, out_rows, row](uint32_t tag) {
    Tensor in = input.contiguous();
    Tensor buffer = wire_buffer(output);
    const bool moves = check_splits_agree(g, out_rows, in_rows, tag) && row > 0;
    if (moves && g.size > 1) {
      auto elements = [row](const std::vector<int64_t>& rows) {
        std::vector<int64_t> n(rows);
        for (int64_t& k : n) k *= row;
        return n;
      };
      gloo::AlltoallvOptions options(g.context);
      with_element_type(in.itemsize(), [&]<class T>(T) {
        options.setInput(typed<T>(in), elements(in_rows));
        options.setOutput(typed<T>(buffer), elements(out_rows));
      });
      g.common(options, tag);
      gloo::alltoallv(options);
    } else if (moves) {
      copy_(buffer, in.view(buffer.sizes()));
    }
    write_back(output, buffer);
  };
  // The ranks agree on the rows' shape and dtype; their counts are checked when it runs.
  std::vector<int64_t> no_rows(input.sizes().begin(), input.sizes().end());
  no_rows[0] = 0;
  return g.enqueue({kAllToAllSingle, 0, empty(no_rows, input.dtype()), -1, {}}, run, {output}, async_op);
}

WorkPtr ProcessGroupGloo::barrier(bool async_op) {
  Impl& g = *impl_;
  auto run = [&g](uint32_t tag) {
    if (g.size == 1) return;
    gloo::BarrierOptions options(g.context);
    g.common(options, tag);
    gloo::barrier(options);
  };
  return g.enqueue({kBarrier, 0, {}, -1, {}}, run, {}, async_op);
}

void ProcessGroupGloo::monitored_barrier(Duration timeout, bool wait_all_ranks) {
  Impl& g = *impl_;
  auto run = [&g, timeout, wait_all_ranks](uint32_t tag) {
    if (g.size == 1) return;
    auto slot = static_cast<uint64_t>(gloo::Slot::build(kMonitoredBarrierSlotPrefix, tag));
    // One byte per peer, owned by the group: a late peer's message may still arrive after a
    // timeout.
    std::vector<char>& scratch = g.barrier_bytes;
    if (g.rank != 0) {
      auto buffer = g.context->createUnboundBuffer(scratch.data(), 1);
      try {
        buffer->send(0, slot);
        buffer->waitSend(timeout);
        buffer->recv(0, slot + 1);
        buffer->waitRecv(timeout);
      } catch (const std::exception&) {
        throw BreaksGroup(ErrorKind::Runtime, "rank 0 did not release the barrier within " +
                                                  std::to_string(timeout.count()) +
                                                  " ms (it names the ranks it missed)");
      }
      return;
    }
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> buffers;
    for (int r = 0; r < g.size; ++r) {
      buffers.push_back(g.context->createUnboundBuffer(&scratch[r], 1));
      if (r) buffers[r]->recv(r, slot);
    }
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string missing;
    for (int r = 1; r < g.size; ++r) {
      auto left = std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
      bool arrived = false;
      try {
        arrived = buffers[r]->waitRecv(std::max(left, Duration(1)));
      } catch (const std::exception&) {
      }
      if (arrived) continue;
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      if (!wait_all_ranks) break;
    }
    if (!missing.empty())
      throw BreaksGroup(ErrorKind::Runtime, (missing.find(',') == std::string::npos ? "rank " : "ranks ") + missing +
                                                " did not arrive within " + std::to_string(timeout.count()) + " ms");
    for (int r = 1; r < g.size; ++r) buffers[r]->send(r, slot + 1);
    for (int r = 1; r < g.size; ++r) buffers[r]->waitSend(timeout);
  };
  g.enqueue({kMonitoredBarrier, 0, {}, -1, {}}, run, {}, false);
}

namespace {

// Send and receive start at once (not on the worker, so that they never wait behind a collective)
// and complete in wait(), which waits for Gloo to finish with the buffer.
class PointToPointWork : public Work {
 public:
  PointToPointWork(std::unique_ptr<gloo::transport::UnboundBuffer> buffer, Tensor staging, Tensor tensor, bool is_send,
                   std::string title, Duration timeout)
      : Work({tensor}),
        buffer_(std::move(buffer)),
        staging_(std::move(staging)),
        tensor_(std::move(tensor)),
        is_send_(is_send),
        title_(std::move(title)),
        timeout_(timeout) {}

  bool wait(Duration timeout) override {
    std::call_once(once_, [&] {
      try {
        Duration limit = timeout == kNoTimeout ? timeout_ : timeout;
        bool done = is_send_ ? buffer_->waitSend(&source_rank_, limit) : buffer_->waitRecv(&source_rank_, limit);
        TP_CHECK(done, title_, "timed out after ", limit.count(), " ms");
        if (!is_send_ && !staging_.is_same(tensor_)) {
          NoGradGuard no_grad;
          write_back(tensor_, staging_);
        }
        finish();
      } catch (const Error&) {
        finish(std::current_exception());
      } catch (const std::exception& e) {
        finish(std::make_exception_ptr(Error(ErrorKind::Runtime, title_ + e.what())));
      }
    });
    return Work::wait(kNoTimeout);
  }
  int source_rank() const override {
    TP_CHECK(is_completed() && !is_send_, title_, "the source rank is known once a recv's wait() returned");
    return source_rank_;
  }

 private:
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer_;
  Tensor staging_, tensor_;
  bool is_send_;
  std::string title_;
  Duration timeout_;
  int source_rank_ = -1;
  std::once_flag once_;
};

}  // namespace

WorkPtr ProcessGroupGloo::send(const Tensor& tensor, int dst, int tag) {
  TP_CHECK(dst >= 0 && dst < size() && dst != rank(), "[send] rank ", rank(), " cannot send to rank ", dst,
           " (world size ", size(), ")");
  Tensor staging = tensor.contiguous();
  auto buffer = impl_->context->createUnboundBuffer(staging.data_ptr(), staging.nbytes());
  buffer->send(dst, gloo::Slot::build(kSendRecvSlotPrefix, static_cast<uint32_t>(tag)));
  std::string title = "[send] rank " + std::to_string(rank()) + " to rank " + std::to_string(dst) + ": ";
  return std::make_shared<PointToPointWork>(std::move(buffer), staging, tensor, true, title, impl_->timeout);
}

WorkPtr ProcessGroupGloo::recv(const Tensor& tensor, std::optional<int> src, int tag) {
  TP_CHECK(!src || (*src >= 0 && *src < size() && *src != rank()), "[recv] rank ", rank(), " cannot receive from rank ",
           src.value_or(-1), " (world size ", size(), ")");
  Tensor staging = tensor.is_contiguous() ? tensor : empty(tensor.sizes(), tensor.dtype());
  auto buffer = impl_->context->createUnboundBuffer(staging.data_ptr(), staging.nbytes());
  auto slot = gloo::Slot::build(kSendRecvSlotPrefix, static_cast<uint32_t>(tag));
  std::vector<int> sources;
  for (int r = 0; r < size(); ++r)
    if (r != rank() && (!src || r == *src)) sources.push_back(r);
  buffer->recv(sources, slot);
  std::string title = "[recv] rank " + std::to_string(rank()) + " from " +
                      (src ? "rank " + std::to_string(*src) : std::string("any rank")) + ": ";
  return std::make_shared<PointToPointWork>(std::move(buffer), staging, tensor, false, title, impl_->timeout);
}

}  // namespace tp::distributed

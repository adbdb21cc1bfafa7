#include "tensorplay/profiler/profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>

#include "tensorplay/core/error.h"

namespace tp::profiler {

namespace detail {
std::atomic<bool> g_enabled{false};
}

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One thread's spans in the open profile. Its thread writes them; stop() takes them, under the
// buffer's mutex (uncontended but for that moment), since a span can close after the profile stops.
struct ThreadBuffer {
  std::mutex mutex;
  uint64_t thread = static_cast<uint64_t>(::syscall(SYS_gettid));
  uint64_t session = 0;  // the profile these spans belong to
  std::vector<Event> events;
  std::vector<int64_t> open;  // indices of the spans open now, innermost last
  int64_t last_closed = -1;
};

struct Session {
  std::mutex mutex;
  std::atomic<uint64_t> id = 0;  // counts the profiles started, so a buffer left from an earlier one is reset
  Options options;
  // Every buffer that recorded in the open profile; shared, so a thread that exits keeps its spans.
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
};

Session& session() {
  static Session s;
  return s;
}

// This thread's buffer, joined to the open profile on first use; returned locked.
std::pair<ThreadBuffer&, std::unique_lock<std::mutex>> buffer() {
  thread_local std::shared_ptr<ThreadBuffer> mine = std::make_shared<ThreadBuffer>();
  Session& s = session();
  if (uint64_t id = s.id.load(); mine->session != id) {
    std::lock_guard session_lock(s.mutex);
    std::lock_guard lock(mine->mutex);
    mine->session = id;
    mine->events.clear();
    mine->open.clear();
    mine->last_closed = -1;
    s.buffers.push_back(mine);
  }
  return {*mine, std::unique_lock(mine->mutex)};
}

int64_t open_span(std::string_view name) {
  auto [b, lock] = buffer();
  Event e;
  e.name = name;
  e.thread = b.thread;
  e.parent = b.open.empty() ? -1 : b.open.back();
  e.start_ns = now_ns();
  b.events.push_back(std::move(e));
  b.open.push_back(static_cast<int64_t>(b.events.size()) - 1);
  return b.open.back();
}

void close_span(int64_t index) {
  auto [b, lock] = buffer();
  if (index >= static_cast<int64_t>(b.events.size())) return;  // the profile it belonged to has ended
  b.events[index].end_ns = now_ns();
  // Spans close innermost first; a range closed out of order closes the ones opened inside it too.
  while (!b.open.empty() && b.open.back() >= index) {
    if (b.events[b.open.back()].end_ns == 0) b.events[b.open.back()].end_ns = b.events[index].end_ns;
    b.open.pop_back();
  }
  b.last_closed = index;
}

}  // namespace

const Options& options() { return session().options; }

void start(Options options) {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  TP_CHECK(!is_enabled(), "Profiler is already enabled on this thread");
  s.id.fetch_add(1);
  s.options = options;
  s.buffers.clear();
  detail::g_enabled.store(true, std::memory_order_release);
}

std::vector<Event> stop() {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  TP_CHECK(is_enabled(), "Can't disable the profiler when it's not running");
  detail::g_enabled.store(false, std::memory_order_release);
  int64_t stop_ns = now_ns();
  std::vector<Event> all;
  for (const auto& b : s.buffers) {
    std::lock_guard buffer_lock(b->mutex);
    const int64_t base = static_cast<int64_t>(all.size());
    for (Event& e : b->events) {
      if (e.end_ns == 0) e.end_ns = stop_ns;  // still open when the profile stopped
      if (e.parent >= 0) e.parent += base;
      all.push_back(std::move(e));
    }
    b->events.clear();
    b->open.clear();
  }
  s.buffers.clear();
  return all;
}

void Span::open(std::string_view name) { index_ = open_span(name); }
void Span::close() { close_span(index_); }

void Span::set_inputs(std::string shapes, std::string dtypes, std::string concrete) {
  auto [b, lock] = buffer();
  if (index_ >= static_cast<int64_t>(b.events.size())) return;
  Event& e = b.events[index_];
  e.input_shapes = std::move(shapes);
  e.input_dtypes = std::move(dtypes);
  e.input_concrete = std::move(concrete);
}

int64_t push_range(std::string_view name, bool user_range) {
  if (!is_enabled()) return -1;
  const int64_t index = open_span(name);
  auto [b, lock] = buffer();
  if (index < static_cast<int64_t>(b.events.size())) b.events[index].user_range = user_range;
  return index;
}

void pop_range(int64_t handle) {
  if (handle >= 0 && is_enabled()) close_span(handle);
}

void record_memory(int64_t bytes) {
  if (!options().profile_memory) return;
  auto [b, lock] = buffer();
  if (!b.open.empty()) b.events[b.open.back()].self_memory += bytes;
}

void annotate_last(ScalarType dtype, int casts) {
  auto [b, lock] = buffer();
  if (b.last_closed < 0 || b.last_closed >= static_cast<int64_t>(b.events.size())) return;
  b.events[b.last_closed].autocast_dtype = dtype;
  b.events[b.last_closed].autocast_casts = casts;
}

}  // namespace tp::profiler

#pragma once
// The profiler's record of what ran: a span per op, per backward node and per user range
// (`record_function`), on every thread, while a profile is open (`tensorplay.profiler.profile`).
//
// Ops open their span on their first line, beside autocast (`TP_OP_ENTRY`, Note [Dispatcher
// layers]; `TP_OP_SPAN` for the ops outside the policy table: profiler/op_span.h); the autograd engine opens one per node it runs; the allocator adds the bytes it hands
// out and takes back to the innermost open span of the thread. When no profile is open each of these
// checks one atomic flag and records nothing.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorplay/core/scalar_type.h"

namespace tp::profiler {

struct Event {
  std::string name;
  int64_t start_ns = 0;  // steady clock
  int64_t end_ns = 0;
  uint64_t thread = 0;                       // the recording thread's id, as the OS numbers it
  int64_t parent = -1;                       // index of the enclosing span of the same thread in the result, or -1
  std::string input_shapes;                  // "[[2, 3], [3], []]" when shapes are recorded
  std::string input_dtypes;                  // "[float, float, Scalar]" likewise
  std::string input_concrete;                // "[null, null, [2, 2], 1]": the values of non-tensor inputs
  int64_t self_memory = 0;                   // bytes allocated minus bytes freed inside, children excluded
  std::optional<ScalarType> autocast_dtype;  // what autocast ran the op in, if it cast
  int autocast_casts = 0;
  bool user_range = false;  // opened by push_range (record_function), not by an op or a node
};

struct Options {
  bool record_shapes = false;
  bool profile_memory = false;
};

namespace detail {
extern std::atomic<bool> g_enabled;
}

// Whether a profile is open: one load (acquire, a plain load on x86), the whole cost when none is.
inline bool is_enabled() { return detail::g_enabled.load(std::memory_order_acquire); }
const Options& options();

// Starts recording on every thread (raises if a profile is already open).
void start(Options options);
// Stops recording and returns the spans, each thread's in the order they opened.
std::vector<Event> stop();

// A span on this thread for the object's lifetime. Opens nothing unless a profile is open.
class Span {
 public:
  explicit Span(std::string_view name) {
    if (is_enabled()) [[unlikely]]
      open(name);
  }
  ~Span() {
    if (index_ >= 0) [[unlikely]]
      close();
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  // The record of this span's inputs, when the profile records shapes.
  bool wants_inputs() const { return index_ >= 0 && options().record_shapes; }
  void set_inputs(std::string shapes, std::string dtypes, std::string concrete);

 private:
  void open(std::string_view name);
  void close();
  int64_t index_ = -1;  // in this thread's buffer
};

// Ranges a caller opens and closes itself (record_function from Python, and with_stack's Python
// calls, which are not the user's annotations): a handle, or -1 when no profile is open.
int64_t push_range(std::string_view name, bool user_range = true);
void pop_range(int64_t handle);

// The allocator's bytes (negative for frees), added to the innermost open span of this thread.
void record_memory(int64_t bytes);

// Autocast's choice for the op whose span closed last on this thread.
void annotate_last(ScalarType dtype, int casts);

}  // namespace tp::profiler

#pragma once
// Random numbers: a counter-based Philox4x32-10 stream. Element i of an op draws from counter
// (offset + i), so results do not depend on how many threads fill the tensor, and
// manual_seed(s) makes every stream reproducible.

#include <array>
#include <atomic>
#include <cstdint>

namespace tp {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) : seed_(seed) {}

  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t initial_seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void set_state(uint64_t seed, uint64_t offset) {
    seed_ = seed;
    offset_ = offset;
  }
  // Reserves n counters for one op and returns the first.
  uint64_t reserve(uint64_t n) { return offset_.fetch_add(n); }

 private:
  uint64_t seed_;
  std::atomic<uint64_t> offset_{0};
};

Generator& default_generator();

// Four independent 32-bit random words for (key, counter).
std::array<uint32_t, 4> philox(uint64_t key, uint64_t counter);

// A uniform double in [0, 1) from 53 random bits.
inline double uniform_double(uint32_t hi, uint32_t lo) {
  return static_cast<double>(((static_cast<uint64_t>(hi) << 32 | lo) >> 11)) * 0x1.0p-53;
}

}  // namespace tp

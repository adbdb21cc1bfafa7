#include "tensorplay/cpu/float32_math.h"

#include <atomic>

namespace tp::cpu {

namespace {
std::atomic<Float32Math> g_math[2] = {Float32Math::Exact, Float32Math::Exact};
}

void set_float32_math(Float32Ops ops, Float32Math math) { g_math[static_cast<int>(ops)].store(math); }
Float32Math float32_math(Float32Ops ops) { return g_math[static_cast<int>(ops)].load(); }

}  // namespace tp::cpu

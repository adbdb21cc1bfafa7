#pragma once
// What the oneDNN-backed kernels (gemm.cpp, conv.cpp) share: the engine, dtype mapping, and a
// cache of primitives with their operands' layouts (plans). oneDNN picks its kernels when a
// primitive is created, from the CPU it finds at run time; creating one costs far more than
// running it, so each is built once per shape, layout and dtype and then reused.

#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tensorplay/core/parallel.h"
#include "tensorplay/core/scalar_type.h"
#include "tensorplay/cpu/float32_math.h"
#include "tensorplay/cpu/onednn/channel_blocks.h"

namespace tp::cpu::onednn {

dnnl::engine& engine();

// Whether oneDNN runs its AMX kernels (the tile unit: bfloat16 products and convolutions on Intel
// since Sapphire Rapids), as ONEDNN_MAX_CPU_ISA and TP_CPU_CAPABILITY leave it.
bool runs_amx();

// f32, bf16 and f16 map to oneDNN types; anything else to undef.
dnnl::memory::data_type data_type(ScalarType t);

// n contiguous values from one of f32, bf16 and f16 to another (widened exactly, rounded to nearest
// even, as core/half.h converts), on the calling thread. oneDNN 2.6 converts 16-bit floats in its
// reorders one value at a time on AVX2, so plans convert with tensorplay's SIMD kernels.
void convert(const void* in, dnnl::memory::data_type from, void* out, dnnl::memory::data_type to, int64_t n);

// The attributes every primitive is created with. Its scratch memory is the caller's to pass
// (Plan::execute does): in oneDNN's default mode, one scratchpad is shared by all primitives
// and a primitive may only run on the thread that created it, but the cache below hands one
// primitive to every thread.
// `math` is how a float32 primitive may compute (cpu/float32_math.h).
dnnl::primitive_attr attributes(Float32Math math = Float32Math::Exact);

// A primitive, created with attributes(), and its operands: each with the layout of tensorplay's
// tensor (plain strides) and the one the primitive was created for. Where they differ, as when a
// primitive is created with format_tag::any, the operand is reordered around each call: oneDNN's
// fast convolutions want blocked layouts (channels in blocks of 16 on AVX-512, of 8 on AVX2) and
// on plain NCHW fall back to im2col and GEMM, several times slower. Activations go between
// NCHW and blocked channels through ChannelBlocks, other operands (weights) through oneDNN.
//
// An operand's dtype may differ from the primitive's too (a 16-bit tensor for a float32 primitive,
// where the CPU has no 16-bit kernel): ChannelBlocks converts as it relays out, any other operand
// is converted in its own layout (see convert) and then reordered.
class Plan {
 public:
  struct Operand {
    int arg;                           // DNNL_ARG_*
    dnnl::memory::desc plain, chosen;  // the tensor's layout, the primitive's
    bool output;
  };
  Plan(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd, const std::vector<Operand>& operands);
  ~Plan();

  // The tensors' data of one call, by DNNL_ARG_* of each operand (a primitive has a handful).
  class Data {
   public:
    Data(std::initializer_list<std::pair<int, void*>> pairs) {
      for (const auto& [arg, ptr] : pairs) add(arg, ptr);
    }
    void add(int arg, void* ptr);
    void* at(int arg) const;

   private:
    std::array<std::pair<int, void*>, 8> pairs_{};
    size_t size_ = 0;
  };

  // Runs the primitive on data on the calling thread with tensorplay's thread count: inputs are
  // reordered into the primitive's layouts first, outputs out of them after.
  void execute(const Data& data) const;

 private:
  struct Reorder {
    dnnl::reorder primitive;
    size_t scratchpad_bytes;
  };
  struct Step {
    Operand operand;
    std::optional<ChannelBlocks> blocks;          // an activation's relayout (and conversion)
    std::optional<dnnl::memory::desc> converted;  // otherwise: the plain layout in the primitive's dtype
    std::optional<Reorder> reorder;               // and the relayout from there
    bool relaid() const { return blocks || converted || reorder; }
  };
  // The oneDNN memory objects of one call, pointed at its tensors before it runs: creating them
  // costs more than a 4x4 product itself (an aligned allocation each), so a plan keeps them
  // for its next call, one set for each thread running it at the same time.
  struct Bindings;
  std::unique_ptr<Bindings> bindings() const;

  dnnl::primitive primitive_;
  size_t scratchpad_bytes_;  // the most any of its primitives (reorders too) needs
  std::vector<Step> steps_;
  mutable std::mutex idle_mutex_;
  mutable std::vector<std::unique_ptr<Bindings>> idle_;
};

using Key = std::vector<int64_t>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 0;
    for (int64_t f : k) h = h * 1000003u ^ std::hash<int64_t>()(f);
    return h;
  }
};

// An LRU cache of plans; a null plan records that oneDNN has no implementation for a key.
class PlanCache {
 public:
  using PlanPtr = std::shared_ptr<const Plan>;

  // Returns the cached plan for key, creating it with make() (which may throw dnnl::error for an
  // unimplemented combination) on first use. The thread count is part of the key: oneDNN splits a
  // primitive's work for the threads there are when it is created (a convolution made for one
  // thread runs no faster on two).
  template <class Make>
  PlanPtr get(Key key, const Make& make) {
    key.push_back(get_num_threads());
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);
      return it->second->second;
    }
    PlanPtr plan;
    try {
      plan = make();
    } catch (const dnnl::error&) {
      plan.reset();
    }
    entries_.emplace_front(key, plan);
    index_[key] = entries_.begin();
    if (entries_.size() > kCapacity) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    return plan;
  }

 private:
  static constexpr size_t kCapacity = 512;
  using Entry = std::pair<Key, PlanPtr>;
  std::mutex mutex_;
  std::list<Entry> entries_;
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index_;
};

}  // namespace tp::cpu::onednn

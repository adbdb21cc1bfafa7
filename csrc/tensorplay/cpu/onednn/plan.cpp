#include "tensorplay/cpu/onednn/plan.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "tensorplay/cpu/convert.h"
#include "tensorplay/dispatch/kernel_toolbox.h"

namespace tp::cpu::onednn {

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

bool runs_amx() {
  static const bool amx = dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx;
  return amx;
}

dnnl::memory::data_type data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return dnnl::memory::data_type::f32;
    case ScalarType::BFloat16: return dnnl::memory::data_type::bf16;
    case ScalarType::Float16: return dnnl::memory::data_type::f16;
    default: return dnnl::memory::data_type::undef;
  }
}

void convert(const void* in, dnnl::memory::data_type from, void* out, dnnl::memory::data_type to, int64_t n) {
  using dt = dnnl::memory::data_type;
  if (from == to) {
    std::memcpy(out, in, n * dnnl::memory::data_type_size(from));
  } else if (to == dt::f32 && from == dt::bf16) {
    convert_n(static_cast<const BFloat16*>(in), static_cast<float*>(out), n);
  } else if (to == dt::f32 && from == dt::f16) {
    convert_n(static_cast<const Half*>(in), static_cast<float*>(out), n);
  } else if (from == dt::f32 && to == dt::bf16) {
    convert_n(static_cast<const float*>(in), static_cast<BFloat16*>(out), n);
  } else if (from == dt::f32 && to == dt::f16) {
    convert_n(static_cast<const float*>(in), static_cast<Half*>(out), n);
  } else {
    TP_FAIL("[onednn] no conversion from data type ", static_cast<int>(from), " to ", static_cast<int>(to));
  }
}

dnnl::primitive_attr attributes(Float32Math math) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (math == Float32Math::BFloat16) attr.set_fpmath_mode(dnnl::fpmath_mode::bf16);
  return attr;
}

namespace {

// Runs p on the calling thread, with OpenMP sized to tensorplay's thread count (oneDNN sizes its
// parallel regions from the calling thread's setting).
void run(const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args) {
  if (omp_get_max_threads() != get_num_threads()) omp_set_num_threads(get_num_threads());
  thread_local dnnl::stream stream(engine());
  p.execute(stream, args);
  stream.wait();
}

// A dense operand of n values converted from one dtype to another, on tensorplay's threads.
void convert_dense(const void* in, dnnl::memory::data_type from, void* out, dnnl::memory::data_type to, int64_t n) {
  const int64_t in_size = dnnl::memory::data_type_size(from), out_size = dnnl::memory::data_type_size(to);
  constexpr int64_t kTaskValues = 16 << 10;
  parallel_for(0, n, kTaskValues, [&](int64_t lo, int64_t hi) {
    convert(static_cast<const char*>(in) + lo * in_size, from, static_cast<char*>(out) + lo * out_size, to, hi - lo);
  });
}

// desc's dims and strides with another data type (desc is a plain strided layout).
dnnl::memory::desc with_data_type(const dnnl::memory::desc& desc, dnnl::memory::data_type type) {
  const dnnl_blocking_desc_t& blocking = desc.data.format_desc.blocking;
  TP_CHECK(desc.data.format_kind == dnnl_blocked && blocking.inner_nblks == 0,
           "[onednn] a tensor's layout must be plain strides");
  const dnnl::memory::dims strides(blocking.strides, blocking.strides + desc.data.ndims);
  return dnnl::memory::desc(desc.dims(), type, strides);
}

int64_t values(const dnnl::memory::desc& desc) {
  int64_t n = 1;
  for (int64_t d : desc.dims()) n *= d;
  return n;
}

}  // namespace

struct Plan::Bindings {
  // Per step: the tensor's memory; its conversion where that is then reordered; the buffer the
  // primitive reads or writes.
  std::vector<dnnl::memory> user, staged, inner;
  dnnl::memory scratchpad;                // empty when no primitive needs one
  std::unordered_map<int, dnnl::memory> args;
  std::vector<std::unordered_map<int, dnnl::memory>> reorder_args;  // per step (empty: none)
};

Plan::Plan(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd, const std::vector<Operand>& operands)
    : primitive_(std::move(primitive)), scratchpad_bytes_(pd.scratchpad_desc().get_size()) {
  for (const Operand& op : operands) {
    Step step{op, ChannelBlocks::between(op.plain, op.chosen), std::nullopt, std::nullopt};
    if (!step.blocks) {
      dnnl::memory::desc staged = op.plain;  // the plain layout in the primitive's dtype
      if (op.plain.data_type() != op.chosen.data_type())
        step.converted = staged = with_data_type(op.plain, op.chosen.data_type());
      if (staged != op.chosen) {
        const auto& [from, to] = op.output ? std::pair(op.chosen, staged) : std::pair(staged, op.chosen);
        dnnl::reorder::primitive_desc reorder_pd(engine(), from, engine(), to, attributes());
        step.reorder = Reorder{dnnl::reorder(reorder_pd), reorder_pd.scratchpad_desc().get_size()};
        scratchpad_bytes_ = std::max(scratchpad_bytes_, step.reorder->scratchpad_bytes);
      }
    }
    steps_.push_back(std::move(step));
  }
}

Plan::~Plan() = default;

void Plan::Data::add(int arg, void* ptr) {
  TP_CHECK(size_ < pairs_.size(), "[onednn] more than ", pairs_.size(), " operands for one primitive");
  pairs_[size_++] = {arg, ptr};
}

void* Plan::Data::at(int arg) const {
  for (size_t i = 0; i < size_; ++i)
    if (pairs_[i].first == arg) return pairs_[i].second;
  TP_FAIL("[onednn] no data for the primitive's argument ", arg);
}

std::unique_ptr<Plan::Bindings> Plan::bindings() const {
  {
    std::lock_guard lock(idle_mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<Bindings> b = std::move(idle_.back());
      idle_.pop_back();
      return b;
    }
  }
  auto b = std::make_unique<Bindings>();
  if (scratchpad_bytes_ > 0) {
    const dnnl::memory::desc bytes({static_cast<int64_t>(scratchpad_bytes_)}, dnnl::memory::data_type::u8,
                                   dnnl::memory::format_tag::x);
    b->scratchpad = dnnl::memory(bytes, engine(), nullptr);
    b->args.emplace(DNNL_ARG_SCRATCHPAD, b->scratchpad);
  }
  for (const Step& s : steps_) {
    const dnnl::memory& user = b->user.emplace_back(s.operand.plain, engine(), nullptr);
    const dnnl::memory& staged = b->staged.emplace_back(
        s.converted && s.reorder ? dnnl::memory(*s.converted, engine(), nullptr) : dnnl::memory());
    auto& reorder_args = b->reorder_args.emplace_back();
    if (!s.relaid()) {
      b->inner.emplace_back();
      b->args.emplace(s.operand.arg, user);
      continue;
    }
    const dnnl::memory& inner = b->inner.emplace_back(s.operand.chosen, engine(), nullptr);
    b->args.emplace(s.operand.arg, inner);
    if (!s.reorder) continue;
    const dnnl::memory& outer = s.converted ? staged : user;
    reorder_args = {{DNNL_ARG_FROM, s.operand.output ? inner : outer}, {DNNL_ARG_TO, s.operand.output ? outer : inner}};
    if (s.reorder->scratchpad_bytes > 0) reorder_args.emplace(DNNL_ARG_SCRATCHPAD, b->scratchpad);
  }
  return b;
}

void Plan::execute(const Data& data) const {
  std::unique_ptr<Bindings> b = bindings();
  // The buffers of this call (scratchpad, operands in the primitive's layouts), alive until it ran.
  std::vector<Tensor> buffers;
  if (scratchpad_bytes_ > 0) {
    const int64_t bytes = static_cast<int64_t>(scratchpad_bytes_);
    b->scratchpad.set_data_handle(buffers.emplace_back(kernel::empty({bytes}, ScalarType::UInt8, DeviceType::CPU)).data_ptr());
  }
  auto buffer = [&](const dnnl::memory::desc& desc) {
    return buffers.emplace_back(kernel::empty({static_cast<int64_t>(desc.get_size())}, ScalarType::UInt8, DeviceType::CPU)).data_ptr();
  };
  for (size_t i = 0; i < steps_.size(); ++i) {
    b->user[i].set_data_handle(data.at(steps_[i].operand.arg));
    if (!steps_[i].relaid()) continue;
    b->inner[i].set_data_handle(buffer(steps_[i].operand.chosen));
    if (steps_[i].converted && steps_[i].reorder) b->staged[i].set_data_handle(buffer(*steps_[i].converted));
  }
  // Moves operand i between the tensor's layout and dtype and the primitive's (in or out of the call).
  auto relayout = [&](size_t i) {
    const Step& s = steps_[i];
    const Operand& op = s.operand;
    void* user = b->user[i].get_data_handle();
    void* inner = b->inner[i].get_data_handle();
    if (s.blocks) return op.output ? s.blocks->from_blocks(inner, user) : s.blocks->to_blocks(user, inner);
    // The plain layout in the primitive's dtype: the tensor itself, or its conversion (into inner
    // where no reorder follows).
    void* staged = !s.converted ? user : s.reorder ? b->staged[i].get_data_handle() : inner;
    const auto plain_type = op.plain.data_type(), chosen_type = op.chosen.data_type();
    if (s.converted && !op.output) convert_dense(user, plain_type, staged, chosen_type, values(op.plain));
    if (s.reorder) run(s.reorder->primitive, b->reorder_args[i]);
    if (s.converted && op.output) convert_dense(staged, chosen_type, user, plain_type, values(op.plain));
  };
  for (size_t i = 0; i < steps_.size(); ++i)
    if (steps_[i].relaid() && !steps_[i].operand.output) relayout(i);
  run(primitive_, b->args);
  for (size_t i = 0; i < steps_.size(); ++i)
    if (steps_[i].relaid() && steps_[i].operand.output) relayout(i);
  std::lock_guard lock(idle_mutex_);
  idle_.push_back(std::move(b));
}

}  // namespace tp::cpu::onednn

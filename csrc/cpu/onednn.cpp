#include "cpu/onednn.h"

#include <omp.h>

#include <algorithm>

#include "ops/ops.h"

namespace tp::cpu::onednn {

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::memory::data_type data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return dnnl::memory::data_type::f32;
    case ScalarType::BFloat16: return dnnl::memory::data_type::bf16;
    case ScalarType::Float16: return dnnl::memory::data_type::f16;
    default: return dnnl::memory::data_type::undef;
  }
}

dnnl::primitive_attr attributes() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
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

}  // namespace

struct Plan::Bindings {
  std::vector<dnnl::memory> user, inner;  // per step: the tensor's memory; the reordered buffer's
  dnnl::memory scratchpad;                // empty when no primitive needs one
  std::unordered_map<int, dnnl::memory> args;
  std::vector<std::unordered_map<int, dnnl::memory>> reorder_args;  // per step (empty: none)
};

Plan::Plan(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd, const std::vector<Operand>& operands)
    : primitive_(std::move(primitive)), scratchpad_bytes_(pd.scratchpad_desc().get_size()) {
  for (const Operand& op : operands) {
    Step step{op, ChannelBlocks::between(op.plain, op.chosen), std::nullopt};
    if (op.chosen != op.plain && !step.blocks) {
      const auto& [from, to] = op.output ? std::pair(op.chosen, op.plain) : std::pair(op.plain, op.chosen);
      dnnl::reorder::primitive_desc reorder_pd(engine(), from, engine(), to, attributes());
      step.reorder = Reorder{dnnl::reorder(reorder_pd), reorder_pd.scratchpad_desc().get_size()};
      scratchpad_bytes_ = std::max(scratchpad_bytes_, step.reorder->scratchpad_bytes);
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
    auto& reorder_args = b->reorder_args.emplace_back();
    if (!s.relaid()) {
      b->inner.emplace_back();
      b->args.emplace(s.operand.arg, user);
      continue;
    }
    const dnnl::memory& inner = b->inner.emplace_back(s.operand.chosen, engine(), nullptr);
    b->args.emplace(s.operand.arg, inner);
    if (!s.reorder) continue;
    reorder_args = {{DNNL_ARG_FROM, s.operand.output ? inner : user}, {DNNL_ARG_TO, s.operand.output ? user : inner}};
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
    b->scratchpad.set_data_handle(buffers.emplace_back(empty({bytes}, ScalarType::UInt8)).data_ptr());
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    b->user[i].set_data_handle(data.at(steps_[i].operand.arg));
    if (!steps_[i].relaid()) continue;
    const int64_t bytes = static_cast<int64_t>(steps_[i].operand.chosen.get_size());
    b->inner[i].set_data_handle(buffers.emplace_back(empty({bytes}, ScalarType::UInt8)).data_ptr());
  }
  // Moves operand i between the tensor's layout and the primitive's (in or out of the call).
  auto relayout = [&](size_t i) {
    const Step& s = steps_[i];
    void* user = b->user[i].get_data_handle();
    void* inner = b->inner[i].get_data_handle();
    if (s.blocks && s.operand.output) s.blocks->from_blocks(inner, user);
    else if (s.blocks) s.blocks->to_blocks(user, inner);
    else run(s.reorder->primitive, b->reorder_args[i]);
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

#include "cpu/onednn.h"

#include <omp.h>

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
// parallel regions from the calling thread's setting) and a scratchpad of its own.
void run(const dnnl::primitive& p, std::unordered_map<int, dnnl::memory> args, size_t scratchpad_bytes) {
  if (omp_get_max_threads() != get_num_threads()) omp_set_num_threads(get_num_threads());
  Tensor scratchpad;
  if (scratchpad_bytes > 0) {
    scratchpad = empty({static_cast<int64_t>(scratchpad_bytes)}, ScalarType::UInt8);
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 dnnl::memory({{static_cast<int64_t>(scratchpad_bytes)}, dnnl::memory::data_type::u8,
                               dnnl::memory::format_tag::x},
                              engine(), scratchpad.data_ptr()));
  }
  dnnl::stream stream(engine());
  p.execute(stream, args);
  stream.wait();
}

}  // namespace

Plan::Plan(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd, const std::vector<Operand>& operands)
    : primitive_(std::move(primitive)), scratchpad_bytes_(pd.scratchpad_desc().get_size()) {
  for (const Operand& op : operands) {
    Step step{op, std::nullopt};
    if (op.chosen != op.plain) {
      const auto& [from, to] = op.output ? std::pair(op.chosen, op.plain) : std::pair(op.plain, op.chosen);
      dnnl::reorder::primitive_desc reorder_pd(engine(), from, engine(), to, attributes());
      step.reorder = Reorder{dnnl::reorder(reorder_pd), reorder_pd.scratchpad_desc().get_size()};
    }
    steps_.push_back(std::move(step));
  }
}

void Plan::execute(const std::unordered_map<int, void*>& data) const {
  std::unordered_map<int, dnnl::memory> args;
  std::vector<Tensor> buffers;  // the operands in the primitive's layouts, alive until it ran
  for (const Step& s : steps_) {
    dnnl::memory user(s.operand.plain, engine(), data.at(s.operand.arg));
    if (!s.reorder) {
      args.emplace(s.operand.arg, user);
      continue;
    }
    const int64_t bytes = static_cast<int64_t>(s.operand.chosen.get_size());
    dnnl::memory inner(s.operand.chosen, engine(), buffers.emplace_back(empty({bytes}, ScalarType::UInt8)).data_ptr());
    if (!s.operand.output)
      run(s.reorder->primitive, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, inner}}, s.reorder->scratchpad_bytes);
    args.emplace(s.operand.arg, inner);
  }
  run(primitive_, args, scratchpad_bytes_);
  for (const Step& s : steps_) {
    if (!s.reorder || !s.operand.output) continue;
    dnnl::memory user(s.operand.plain, engine(), data.at(s.operand.arg));
    run(s.reorder->primitive, {{DNNL_ARG_FROM, args.at(s.operand.arg)}, {DNNL_ARG_TO, user}},
        s.reorder->scratchpad_bytes);
  }
}

}  // namespace tp::cpu::onednn

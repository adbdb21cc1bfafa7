#pragma once
// The process group on Gloo, PyTorch's CPU collective engine (Debian's libgloo): ranks connect in a
// full TCP mesh through a Store, and a worker thread runs the collectives in the order they were
// called. What Gloo leaves to its caller is done here:
// - every collective carries a sequence number and its errors name the op, that number, the
//   tensor, this rank and the peer's rank (Gloo names only a peer's address);
// - before each collective the ranks compare what they are about to run (op, dtype, shape, root),
//   because Gloo aborts the whole process when the sizes differ; a mismatch raises on every rank
//   (TP_DISTRIBUTED_DEBUG=OFF skips the check and its message exchange);
// - a caller that waits for the next collective runs it itself, sparing two thread wake-ups;
// - after a transport error or a timeout Gloo's connections are dead, so the group is broken:
//   later calls fail at once with the first error;
// - float16 and bfloat16 are reduced in float32 and rounded once; AVG and the bitwise ops, which
//   Gloo lacks, are ours.

#include <memory>
#include <string>

#include "tensorplay/distributed/process_group.h"
#include "tensorplay/distributed/store.h"

namespace tp::distributed {

class ProcessGroupGloo : public ProcessGroup {
 public:
  // Connects to every other rank through store, which the group's keys are written under (give
  // each group its own PrefixStore). hostname: the local address the peers reach this rank on
  // (empty: this machine's hostname). A rank missing after timeout is named.
  ProcessGroupGloo(StorePtr store, int rank, int size, Duration timeout, std::string hostname = "");
  ~ProcessGroupGloo() override;

  std::string backend_name() const override { return "gloo"; }
  Duration timeout() const;

  WorkPtr all_reduce(const Tensor& tensor, ReduceOp op, bool async_op) override;
  WorkPtr broadcast(const Tensor& tensor, int root, bool async_op) override;
  WorkPtr reduce(const Tensor& tensor, int root, ReduceOp op, bool async_op) override;
  WorkPtr all_gather(const std::vector<Tensor>& outputs, const Tensor& input, bool async_op) override;
  WorkPtr all_gather_into_tensor(const Tensor& output, const Tensor& input, bool async_op) override;
  WorkPtr reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op, bool async_op) override;
  WorkPtr gather(const std::vector<Tensor>& outputs, const Tensor& input, int root, bool async_op) override;
  WorkPtr scatter(const Tensor& output, const std::vector<Tensor>& inputs, int root, bool async_op) override;
  WorkPtr all_to_all_single(const Tensor& output, const Tensor& input, IntArrayRef output_splits,
                            IntArrayRef input_splits, bool async_op) override;
  WorkPtr barrier(bool async_op) override;
  void monitored_barrier(Duration timeout, bool wait_all_ranks) override;
  WorkPtr send(const Tensor& tensor, int dst, int tag) override;
  WorkPtr recv(const Tensor& tensor, std::optional<int> src, int tag) override;
  uint64_t sequence_number() const override;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;  // shared with the Works, which may run their collective
};

}  // namespace tp::distributed

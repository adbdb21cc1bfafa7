#pragma once
// A group of ranks that run collectives together (torch.distributed's ProcessGroup), whatever the
// engine underneath: Gloo for CPU tensors today; a CUDA engine (NCCL) would be a second subclass
// connecting through the same Store. Each collective returns a Work. With async_op it returns at
// once and the tensors must not be touched until the Work completes; without, it returns once the
// collective has completed (and throws its error), run on the calling thread where the engine can,
// which saves the thread hand-offs that a small collective's latency is mostly made of. Calls are
// matched across ranks by their order: every rank must call the same collectives in the same order.

#include <optional>
#include <string>
#include <vector>

#include "tensorplay/core/tensor.h"
#include "tensorplay/distributed/reduce_op.h"
#include "tensorplay/distributed/work.h"

namespace tp::distributed {

class ProcessGroup {
 public:
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~ProcessGroup() = default;

  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend_name() const = 0;

  virtual WorkPtr all_reduce(const Tensor& tensor, ReduceOp op, bool async_op) = 0;
  virtual WorkPtr broadcast(const Tensor& tensor, int root, bool async_op) = 0;
  // Result on root only; the other ranks' tensor is left as it was.
  virtual WorkPtr reduce(const Tensor& tensor, int root, ReduceOp op, bool async_op) = 0;
  virtual WorkPtr all_gather(const std::vector<Tensor>& outputs, const Tensor& input, bool async_op) = 0;
  virtual WorkPtr all_gather_into_tensor(const Tensor& output, const Tensor& input, bool async_op) = 0;
  virtual WorkPtr reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op, bool async_op) = 0;
  // outputs on root only (empty elsewhere); inputs likewise for scatter.
  virtual WorkPtr gather(const std::vector<Tensor>& outputs, const Tensor& input, int root, bool async_op) = 0;
  virtual WorkPtr scatter(const Tensor& output, const std::vector<Tensor>& inputs, int root, bool async_op) = 0;
  // input's rows (first dimension) in size() blocks, block i to rank i, and output's blocks from the
  // ranks in rank order: input_splits[i] and output_splits[i] rows, or equal blocks where empty.
  virtual WorkPtr all_to_all_single(const Tensor& output, const Tensor& input, IntArrayRef output_splits,
                                    IntArrayRef input_splits, bool async_op) = 0;
  virtual WorkPtr barrier(bool async_op) = 0;
  // Rank 0 waits for every other rank and names the ones that did not arrive within timeout
  // (all of them with wait_all_ranks, else the first).
  virtual void monitored_barrier(Duration timeout, bool wait_all_ranks) = 0;

  virtual WorkPtr send(const Tensor& tensor, int dst, int tag) = 0;
  // src = std::nullopt receives from any rank; the Work's source_rank() says which.
  virtual WorkPtr recv(const Tensor& tensor, std::optional<int> src, int tag) = 0;

  // Collectives started so far on this rank (the next one gets this number).
  virtual uint64_t sequence_number() const = 0;

 private:
  int rank_;
  int size_;
};

using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

}  // namespace tp::distributed

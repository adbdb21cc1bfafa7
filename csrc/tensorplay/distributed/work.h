#pragma once
// The handle an asynchronous collective returns (torch.distributed's Work): it completes once, with
// success or with the error that broke the operation, and wait() rethrows that error.

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "tensorplay/core/tensor.h"
#include "tensorplay/distributed/store.h"

namespace tp::distributed {

class Work {
 public:
  // wait() with this timeout waits for as long as the operation takes (its own timeout bounds it).
  static constexpr Duration kNoTimeout = Duration(0);

  explicit Work(std::vector<Tensor> result = {}) : result_(std::move(result)) {}
  virtual ~Work() = default;

  bool is_completed() const;
  // Completed without an error.
  bool is_success() const;
  std::exception_ptr exception() const;
  // Blocks until the operation completes and rethrows its error; a timeout is a RuntimeError too.
  virtual bool wait(Duration timeout = kNoTimeout);
  // The tensors the operation wrote (what Work.result() returns in Python).
  const std::vector<Tensor>& result() const { return result_; }
  // The rank a receive got its message from (a receive from any rank learns it on completion).
  virtual int source_rank() const;

  // Called once by whoever runs the operation.
  void finish(std::exception_ptr error = nullptr);

 private:
  mutable std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::vector<Tensor> result_;
};

using WorkPtr = std::shared_ptr<Work>;

// A Work that is already complete: what a synchronous call, or an op with nothing to do, returns.
WorkPtr completed_work(std::vector<Tensor> result = {});

}  // namespace tp::distributed

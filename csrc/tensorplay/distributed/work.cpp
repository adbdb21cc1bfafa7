#include "tensorplay/distributed/work.h"

#include "tensorplay/core/error.h"

namespace tp::distributed {

bool Work::is_completed() const {
  std::lock_guard lock(mutex_);
  return done_;
}

bool Work::is_success() const {
  std::lock_guard lock(mutex_);
  return done_ && !error_;
}

std::exception_ptr Work::exception() const {
  std::lock_guard lock(mutex_);
  return error_;
}

bool Work::wait(Duration timeout) {
  std::unique_lock lock(mutex_);
  if (timeout == kNoTimeout) {
    done_cv_.wait(lock, [&] { return done_; });
  } else if (!done_cv_.wait_for(lock, timeout, [&] { return done_; })) {
    TP_FAIL("[Work.wait] timed out after ", timeout.count(), " ms");
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

int Work::source_rank() const { TP_FAIL("[Work.source_rank] only a recv's Work has a source rank"); }

void Work::finish(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
    error_ = error;
  }
  done_cv_.notify_all();
}

WorkPtr completed_work(std::vector<Tensor> result) {
  auto work = std::make_shared<Work>(std::move(result));
  work->finish();
  return work;
}

}  // namespace tp::distributed

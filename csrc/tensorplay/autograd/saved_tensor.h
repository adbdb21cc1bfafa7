#pragma once
// A tensor a backward formula needs, saved at forward time.
//
// Unpacking checks that nothing wrote the tensor in place since it was saved (Note [Version
// counter] in core/storage.h), and fails after a backward pass freed it (retain_graph=False).

#include <memory>

#include "tensorplay/autograd/node.h"

namespace tp::autograd {

class SavedTensor {
 public:
  SavedTensor() = default;
  // `is_output`: t is an output of the node saving it. It is then kept without its history, so
  // that node and tensor do not own each other, and gets its history back when unpacked: its
  // place among the node's outputs is read here, so an op with several outputs saves them after
  // Record::finish has given them their places.
  SavedTensor(const Tensor& t, bool is_output);

  // `owner` is the node that saved the tensor.
  Tensor unpack(const Node& owner) const;
  void release();

 private:
  Tensor data_;
  uint32_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool saved_ = false;
  bool released_ = false;
};

}  // namespace tp::autograd
